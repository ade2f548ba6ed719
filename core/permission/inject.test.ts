import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  PERMISSION_CLAIM_ANNOTATION,
  PERMISSION_GRANT_ANNOTATION,
  PERMISSION_GROUP_ANNOTATION,
  PERMISSION_STATUS_ANNOTATION,
  POD_PERMISSION_FINALIZER,
} from "../names";
import {
  freeVolumeName,
  INIT_CONTAINER_NAME,
  INIT_ENV,
  parseInjectConfig,
  planInjection,
  TOKEN_MOUNT_PATH,
  TOKEN_PATH,
  type InjectConfig,
  type InjectDecision,
} from "./inject";
import type { Container, PermissionPod } from "./pod";

const config: InjectConfig = {
  image: "ghcr.io/bulwark/init:1",
  serverUrl: "https://permission-server.bulwark-system.svc:8443",
  audience: "bulwark-permission-server",
  tokenExpirationSeconds: 3600,
  ownNamespace: "bulwark-system",
};

const app: Container = { name: "app", image: "nginx", env: [{ name: "A", value: "1" }] };
const istioInit: Container = { name: "istio-init", image: "istio/proxyv2" };

/** A ReplicaSet's pod as admission sees it: generateName, no name or namespace, extra fields. */
function pod(
  extra: {
    annotations?: Record<string, string>;
    spec?: PermissionPod["spec"];
    finalizers?: string[];
  } = {},
) {
  return {
    metadata: {
      generateName: "web-7d4b9-",
      labels: { app: "web" },
      annotations: { [PERMISSION_GROUP_ANNOTATION]: "db-readers", ...extra.annotations },
      ...(extra.finalizers ? { finalizers: extra.finalizers } : {}),
    },
    spec: { containers: [app], nodeSelector: { zone: "a" }, ...extra.spec },
  };
}

function injected<P extends PermissionPod>(decision: InjectDecision<P>): P {
  assert.equal(decision.action, "inject", JSON.stringify(decision));
  if (decision.action !== "inject") throw new Error("unreachable");
  return decision.pod;
}

describe("planInjection: skip and deny", () => {
  const cases: [string, PermissionPod, string, "skip" | "deny", RegExp][] = [
    [
      "a pod without the group annotation",
      { metadata: { annotations: { a: "b" } } },
      "apps",
      "skip",
      /no permission\.bulwark\.dev\/group annotation/,
    ],
    ["a pod without metadata", {}, "apps", "skip", /no permission\.bulwark\.dev\/group/],
    [
      "a pod in Bulwark's own namespace",
      pod(),
      "bulwark-system",
      "skip",
      /own namespace bulwark-system/,
    ],
    [
      "a Windows pod",
      pod({ spec: { os: { name: "windows" } } }),
      "apps",
      "deny",
      /^spec\.os\.name: "windows" pods cannot use permission groups: .*Linux only/,
    ],
    [
      "a pod that already has bulwark-init",
      pod({ spec: { initContainers: [istioInit, { name: INIT_CONTAINER_NAME }] } }),
      "apps",
      "skip",
      /already has a container named bulwark-init/,
    ],
    [
      "a pod with an app container named bulwark-init",
      pod({ spec: { containers: [{ name: INIT_CONTAINER_NAME }] } }),
      "apps",
      "skip",
      /already has a container named bulwark-init/,
    ],
    [
      "a hostNetwork pod",
      pod({ spec: { hostNetwork: true } }),
      "apps",
      "deny",
      /group "db-readers" cannot be granted to a hostNetwork pod: .*every host-network pod on that node/,
    ],
    [
      "an empty group",
      pod({ annotations: { [PERMISSION_GROUP_ANNOTATION]: "" } }),
      "apps",
      "deny",
      /^metadata\.annotations\["permission\.bulwark\.dev\/group"\]: "" is not a PermissionGroup name/,
    ],
    [
      "an invalid group name",
      pod({ annotations: { [PERMISSION_GROUP_ANNOTATION]: "DB_Readers" } }),
      "apps",
      "deny",
      /"DB_Readers" is not a PermissionGroup name/,
    ],
  ];
  for (const [title, input, namespace, action, reason] of cases) {
    it(`given ${title}, returns ${action}`, () => {
      const decision = planInjection(input, namespace, config);
      assert.equal(decision.action, action);
      assert.match(decision.reason, reason);
    });
  }

  it("given a hostNetwork pod with a bad group name, returns the name problem first", () => {
    const decision = planInjection(
      pod({ annotations: { [PERMISSION_GROUP_ANNOTATION]: "-x" }, spec: { hostNetwork: true } }),
      "apps",
      config,
    );
    assert.equal(decision.action, "deny");
    assert.match(decision.action === "deny" ? decision.reason : "", /not a PermissionGroup name/);
  });
});

describe("planInjection: inject", () => {
  it("given an annotated pod, returns the group and a copy, the input untouched", () => {
    const input = pod({ spec: { containers: [app], initContainers: [istioInit] } });
    const before = structuredClone(input);
    const decision = planInjection(input, "apps", config);
    assert.equal(decision.action === "inject" && decision.group, "db-readers");
    assert.notEqual(injected(decision), input);
    assert.deepEqual(input, before);
  });

  it("given a pod with istio-init, returns bulwark-init first and the others unchanged after it", () => {
    const out = injected(
      planInjection(
        pod({ spec: { containers: [app], initContainers: [istioInit] } }),
        "apps",
        config,
      ),
    );
    assert.deepEqual(
      out.spec.initContainers?.map(c => c.name),
      [INIT_CONTAINER_NAME, "istio-init"],
    );
    assert.deepEqual(out.spec.initContainers?.[1], istioInit);
    assert.deepEqual(out.spec.containers, [app]);
  });

  it("given a pod, returns every other field carried over", () => {
    const out = injected(planInjection(pod(), "apps", config));
    assert.deepEqual(out.metadata.labels, { app: "web" });
    assert.equal(out.metadata.generateName, "web-7d4b9-");
    assert.deepEqual(out.spec.nodeSelector, { zone: "a" });
  });

  it("given a pod, returns the Downward API identity, the group, the server and the token path in env", () => {
    const init = injected(planInjection(pod(), "apps", config)).spec.initContainers?.[0];
    const env = new Map(
      (init?.env ?? []).map(e => [e.name, e.value ?? e.valueFrom?.fieldRef?.fieldPath]),
    );
    assert.deepEqual(Object.fromEntries(env), {
      [INIT_ENV.podName]: "metadata.name",
      [INIT_ENV.podNamespace]: "metadata.namespace",
      [INIT_ENV.podUid]: "metadata.uid",
      [INIT_ENV.podIp]: "status.podIP",
      [INIT_ENV.group]: "db-readers",
      [INIT_ENV.server]: config.serverUrl,
      [INIT_ENV.tokenPath]: TOKEN_PATH,
    });
    assert.equal(init?.image, config.image);
    assert.ok(TOKEN_PATH.startsWith(`${TOKEN_MOUNT_PATH}/`));
  });

  it("given a CA bundle, returns it in BULWARK_PERMISSION_CA; without one, no such variable", () => {
    const withCa = {
      ...config,
      caBundle: "-----BEGIN CERTIFICATE-----\nAA==\n-----END CERTIFICATE-----\n",
    };
    const init = injected(planInjection(pod(), "apps", withCa)).spec.initContainers?.[0];
    const ca = init?.env?.find(e => e.name === INIT_ENV.ca);
    assert.deepEqual(ca, { name: INIT_ENV.ca, value: withCa.caBundle });
    const plain = injected(planInjection(pod(), "apps", config)).spec.initContainers?.[0];
    assert.equal(
      plain?.env?.some(e => e.name === INIT_ENV.ca),
      false,
    );
  });

  it("given a pod, returns a locked-down, small init container", () => {
    const init = injected(planInjection(pod(), "apps", config)).spec.initContainers?.[0];
    assert.deepEqual(init?.securityContext, {
      runAsNonRoot: true,
      runAsUser: 65532,
      runAsGroup: 65532,
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      privileged: false,
      capabilities: { drop: ["ALL"] },
      seccompProfile: { type: "RuntimeDefault" },
    });
    assert.deepEqual(init?.resources, {
      requests: { cpu: "10m", memory: "64Mi" },
      limits: { cpu: "200m", memory: "128Mi" },
    });
  });

  it("given a pod, returns a projected token for the server's audience, mounted read-only", () => {
    const out = injected(planInjection(pod(), "apps", config));
    assert.deepEqual(out.spec.volumes, [
      {
        name: "bulwark-token",
        projected: {
          sources: [
            {
              serviceAccountToken: {
                audience: config.audience,
                expirationSeconds: 3600,
                path: "token",
              },
            },
          ],
        },
      },
    ]);
    assert.deepEqual(out.spec.initContainers?.[0]?.volumeMounts, [
      { name: "bulwark-token", mountPath: TOKEN_MOUNT_PATH, readOnly: true },
    ]);
  });

  it("given a pod that has a volume named bulwark-token, returns the token under a free name", () => {
    const volumes = [{ name: "bulwark-token" }, { name: "data" }];
    const out = injected(
      planInjection(pod({ spec: { containers: [app], volumes } }), "apps", config),
    );
    assert.deepEqual(
      out.spec.volumes?.map(v => v.name),
      ["bulwark-token", "data", "bulwark-token-2"],
    );
    assert.equal(out.spec.initContainers?.[0]?.volumeMounts?.[0]?.name, "bulwark-token-2");
  });

  const finalizerCases: [string, string[] | undefined, string[]][] = [
    ["no finalizers", undefined, [POD_PERMISSION_FINALIZER]],
    [
      "other finalizers",
      ["batch.kubernetes.io/job-tracking"],
      ["batch.kubernetes.io/job-tracking", POD_PERMISSION_FINALIZER],
    ],
    ["our finalizer already", [POD_PERMISSION_FINALIZER, "x/y"], [POD_PERMISSION_FINALIZER, "x/y"]],
  ];
  for (const [title, finalizers, expected] of finalizerCases) {
    it(`given a pod with ${title}, returns our finalizer once, after the others`, () => {
      const out = injected(planInjection(pod({ finalizers }), "apps", config));
      assert.deepEqual(out.metadata.finalizers, expected);
    });
  }

  it("given a pod carrying a grant record, returns status pending and the record dropped", () => {
    const out = injected(
      planInjection(
        pod({ annotations: { [PERMISSION_GRANT_ANNOTATION]: "{}", keep: "me" } }),
        "apps",
        config,
      ),
    );
    assert.deepEqual(out.metadata.annotations, {
      [PERMISSION_GROUP_ANNOTATION]: "db-readers",
      keep: "me",
      [PERMISSION_STATUS_ANNOTATION]: "pending",
    });
  });

  it("given the injected pod again, returns skip: injection is idempotent", () => {
    const out = injected(planInjection(pod(), "apps", config));
    assert.equal(planInjection(out, "apps", config).action, "skip");
  });
});

describe("freeVolumeName", () => {
  const cases: [string[] | undefined, string][] = [
    [undefined, "bulwark-token"],
    [["data"], "bulwark-token"],
    [["bulwark-token", "bulwark-token-2"], "bulwark-token-3"],
  ];
  for (const [names, expected] of cases) {
    it(`given volumes ${JSON.stringify(names)}, returns ${expected}`, () => {
      assert.equal(freeVolumeName(names?.map(name => ({ name }))), expected);
    });
  }
});

describe("parseInjectConfig", () => {
  const cases: [string, Partial<Record<keyof InjectConfig, unknown>>, string[]][] = [
    ["a valid config", {}, []],
    [
      "a token that expires in under 10 minutes",
      { tokenExpirationSeconds: 599 },
      ["tokenExpirationSeconds"],
    ],
    ["a server URL that is not http(s)", { serverUrl: "grpc://x" }, ["serverUrl"]],
    ["no image", { image: undefined }, ["image"]],
    [
      "a CA bundle with an http:// server URL",
      { caBundle: "pem", serverUrl: "http://permission-server:8443" },
      ["caBundle"],
    ],
  ];
  for (const [title, change, fields] of cases) {
    it(`given ${title}, returns ${fields.length === 0 ? "the config" : fields.join(", ")}`, () => {
      const result = parseInjectConfig({ ...config, ...change });
      if (fields.length === 0) assert.deepEqual(result, { ok: true, value: config, warnings: [] });
      else assert.deepEqual(result.ok ? [] : result.errors.map(e => e.field), fields);
    });
  }
});

describe("planInjection: Bulwark's annotations copied onto a new pod", () => {
  it("injects it anyway, replacing the status and dropping the grant record and the claim", () => {
    const copied = pod({
      annotations: {
        [PERMISSION_STATUS_ANNOTATION]: '{"phase":"granted","uid":"old","ip":"10.0.0.5"}',
        [PERMISSION_GRANT_ANNOTATION]: '{"ip":"10.0.0.5"}',
        [PERMISSION_CLAIM_ANNOTATION]: '{"holder":"replica-0"}',
      },
    });
    const decision = planInjection(copied, "apps", config);
    assert.equal(decision.action, "inject");
    const annotations: Record<string, string | undefined> =
      decision.action === "inject" ? (decision.pod.metadata?.annotations ?? {}) : {};
    assert.equal(annotations[PERMISSION_STATUS_ANNOTATION], "pending");
    assert.equal(annotations[PERMISSION_GRANT_ANNOTATION], undefined);
    assert.equal(annotations[PERMISSION_CLAIM_ANNOTATION], undefined);
  });

  it("a Linux pod (spec.os.name linux) is injected as one without spec.os", () => {
    assert.equal(
      planInjection(pod({ spec: { os: { name: "linux" } } }), "apps", config).action,
      "inject",
    );
  });
});
