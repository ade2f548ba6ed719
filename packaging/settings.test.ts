// Every setting of every process refuses a bad value with one message naming the variable (never
// a silent NaN or default), except the few that are free text (paths, hosts, names). A new
// setting must be one or the other: this test lists every variable of every schema.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { settingsSchema as gatewaySchema, readSettings } from "../gateway/settings";
import {
  settingsSchema as permissionServerSchema,
  loadSettings as loadPermissionServer,
} from "../permission-server/settings";
import { initSettingsSchema, loadInitSettings } from "../init/settings";
import { parseSettings as parseDaemon, SETTING_FLAGS } from "../edge-health-daemon/settings";
import { guardSettingsSchema, loadGuardSettings } from "../capabilities/ingress-guard/settings";
import {
  permissionTimingsSchema,
  loadSettings as loadPodPermission,
} from "../capabilities/pod-permission/settings";
import { edgeSettingsSchema, loadEdgeSettings } from "../capabilities/edge-health/settings";

/** Values that no validated setting accepts all of. */
const BAD_VALUES = ["bogus", "-1", "1e99", "0.5", "x/y/z", "ftp://x", "UPPER_CASE", "a=b,c", "{"];

interface Process {
  name: string;
  variables: string[];
  /** The error message for `env`, or undefined when it loads. */
  load: (env: Record<string, string>) => string | undefined;
  /** A valid environment for the required variables. */
  base: Record<string, string>;
  /** Variables any text is good for. */
  freeText: string[];
}

const keysOf = (schema: { in?: unknown; shape?: unknown }): string[] => {
  const object = (schema.in ?? schema) as { shape: Record<string, unknown> };
  return Object.keys(object.shape);
};

const thrown = (load: () => unknown): string | undefined => {
  try {
    load();
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
};

const messageOf = (result: { ok: true } | { ok: false; message: string }) =>
  result.ok ? undefined : result.message;

const PROCESSES: Process[] = [
  {
    name: "gateway",
    variables: keysOf(gatewaySchema),
    load: env => messageOf(readSettings(env)),
    base: { BULWARK_POD_NAME: "bulwark-gateway-0" },
    freeText: [
      "KUBECONFIG",
      "BULWARK_INGRESS_KUBECONFIG",
      "BULWARK_LISTEN_HOST",
      "BULWARK_STATE_DIR",
      "BULWARK_INGRESS_REFERRERS",
      "BULWARK_CANARY_REFERRERS",
    ],
  },
  {
    name: "permission server",
    variables: keysOf(permissionServerSchema),
    load: env => messageOf(loadPermissionServer(env, [])),
    base: {},
    freeText: [
      "BULWARK_PERMISSION_HOST",
      "KUBECONFIG",
      "BULWARK_PERMISSION_AUDIENCE",
      "BULWARK_REPLICA_NAME",
    ],
  },
  {
    name: "init",
    variables: keysOf(initSettingsSchema),
    load: env => messageOf(loadInitSettings(env)),
    base: {
      POD_NAME: "web-0",
      POD_NAMESPACE: "shop",
      POD_UID: "u-1",
      POD_IP: "10.0.0.1",
      BULWARK_PERMISSION_SERVER: "https://permission.example",
    },
    freeText: [
      "POD_NAME",
      "POD_NAMESPACE",
      "POD_UID",
      "POD_IP",
      "BULWARK_TOKEN_PATH",
      "BULWARK_PERMISSION_GROUP",
      "BULWARK_PERMISSION_CA_PATH",
    ],
  },
  {
    name: "edge-health daemon",
    variables: SETTING_FLAGS.map(s => s.env),
    load: env => {
      const parsed = parseDaemon([], env, () => "{}");
      return parsed.kind === "error" ? parsed.message : undefined;
    },
    base: { BULWARK_NODE_NAME: "edge-1" },
    // BULWARK_EDGE_CONFIG names a file; its contents are checked (settings.test.ts there).
    freeText: [
      "BULWARK_EDGE_CONFIG",
      "BULWARK_NODE_NAME",
      "BULWARK_EDGE_LISTEN_ADDRESS",
      "BULWARK_EDGE_ZONE_NAMESPACE",
      "BULWARK_EDGE_HMAC_KEY_FILE",
      "KUBECONFIG",
    ],
  },
  {
    name: "module: ingress guard",
    variables: keysOf(guardSettingsSchema),
    load: env => thrown(() => loadGuardSettings(env)),
    base: {},
    freeText: [],
  },
  {
    name: "module: pod permission",
    variables: keysOf(permissionTimingsSchema),
    load: env => thrown(() => loadPodPermission(env)),
    base: {},
    freeText: [],
  },
  {
    name: "module: edge health",
    variables: keysOf(edgeSettingsSchema),
    load: env => thrown(() => loadEdgeSettings(env)),
    base: {},
    freeText: [],
  },
];

for (const process of PROCESSES) {
  describe(`${process.name} settings`, () => {
    it("load with only the required variables set", () => {
      assert.equal(process.load(process.base), undefined);
    });
    it("list only free-text variables that exist", () => {
      for (const name of process.freeText) assert.ok(process.variables.includes(name), name);
    });
    for (const variable of process.variables.filter(v => !process.freeText.includes(v))) {
      it(`refuse a bad ${variable}, naming it`, () => {
        const refusals = BAD_VALUES.map(value =>
          process.load({ ...process.base, [variable]: value }),
        );
        const named = refusals.find(message => message?.includes(variable));
        assert.ok(
          named,
          `no bad value was refused naming ${variable}: ${JSON.stringify(refusals)}`,
        );
        assert.ok(!named.includes("\n"), `one line: ${named}`);
      });
    }
  });
}
