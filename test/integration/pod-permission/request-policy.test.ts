// A pod naming a permission group has one admission call: Bulwark's mutation decides (core/
// permission/inject.ts's planInjection, then the group lookup) and writes a refusal; the
// ValidatingAdmissionPolicy (capabilities/pod-permission/request-policy.ts) refuses with it and
// checks the final pod in CEL. Differential, through the real API server and the running module:
// generated pods (every short group name over a small alphabet, hostNetwork, spec.os) against
// planInjection's verdict. Pods that carry a `bulwark-init` container of the creator's own are
// skipped by the mutation, so they reach the policy's CEL rules alone: the same verdict is
// expected of them, as the final-pod check (another webhook may change the pod after Bulwark's).
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { CustomObjectsApi, type V1Pod } from "@kubernetes/client-node";
import {
  createPermissionGroup,
  permissionGroup,
  rejection,
  testCluster,
  testNamespace,
} from "../../harness/cluster";
import { pick, seededRandom, shortStrings } from "../../harness/generate";
import { apiMessage } from "../../../kube/api-errors";
import { planInjection, type PermissionPod } from "../../../core/permission";
import { loadSettings } from "../../../capabilities/pod-permission/settings";
import { PERMISSION_GROUP_ANNOTATION, PERMISSION_REFUSAL_ANNOTATION } from "../../../core/names";
import { REQUEST_RULES } from "../../../capabilities/pod-permission/request-policy";

const cluster = testCluster();
const custom = cluster.kc.makeApiClient(CustomObjectsApi);
const inject = loadSettings({}).inject;

/** The policy's messages for the CEL rules, in its order (the first failing one is reported). */
const [, NAME_RULE, HOST_RULE, OS_RULE] = REQUEST_RULES.map(rule =>
  "message" in rule ? rule.message : "",
);

interface Case {
  name: string;
  group: string;
  hostNetwork?: boolean;
  os?: string;
  /** The creator's own container named bulwark-init: the mutation skips the pod. */
  ownInit: boolean;
}

function podOf(c: Case): V1Pod {
  return {
    metadata: { name: c.name, annotations: { [PERMISSION_GROUP_ANNOTATION]: c.group } },
    spec: {
      ...(c.ownInit ? { initContainers: [{ name: "bulwark-init", image: "mine:1" }] } : {}),
      containers: [{ name: "app", image: "registry.example/app:1" }],
      ...(c.hostNetwork === undefined ? {} : { hostNetwork: c.hostNetwork }),
      ...(c.os === undefined ? {} : { os: { name: c.os } }),
    },
  };
}

/** The verdict planInjection gives the pod as its creator wrote it, without a bulwark-init of theirs. */
function rulesVerdict(c: Case, namespace: string): string | undefined {
  const plan = planInjection(podOf({ ...c, ownInit: false }) as PermissionPod, namespace, inject);
  return plan.action === "deny" ? plan.reason : undefined;
}

/** The CEL rule's message for planInjection's reason: the same rule, the policy's own words. */
function celMessage(reason: string): string {
  if (/not a PermissionGroup name/.test(reason)) return NAME_RULE!;
  if (/hostNetwork/.test(reason)) return HOST_RULE!;
  if (/^spec\.os\.name/.test(reason)) return OS_RULE!;
  throw new Error(`no CEL rule for planInjection's reason: ${reason}`);
}

const EXISTING = ["a", "a-a", "a.a", "db-readers"];

/** Every short name with random settings, then every setting with each group that exists. */
function cases(): Case[] {
  const random = seededRandom(25);
  const names = [
    ...shortStrings(["a", "-", ".", "A"], 3),
    "a_b",
    "é",
    "a".repeat(253),
    "a".repeat(254),
    `${"a".repeat(63)}.${"b".repeat(63)}`,
    " a",
  ];
  const generated = names.map(group => ({
    group,
    hostNetwork: pick(random, [undefined, undefined, false, true]),
    os: pick(random, [undefined, undefined, "linux", "windows"]),
    ownInit: random() < 0.4,
  }));
  const settings = EXISTING.flatMap(group =>
    [undefined, false, true].flatMap(hostNetwork =>
      [undefined, "linux", "windows"].flatMap(os =>
        [false, true].map(ownInit => ({ group, hostNetwork, os, ownInit })),
      ),
    ),
  );
  return [...generated, ...settings].map((c, index) => ({ name: `p${index}`, ...c }));
}

describe("pod admission: one call, refused by the request policy", () => {
  let ns: string;
  let drop: () => Promise<void>;
  const existing = new Set(EXISTING);

  before(async () => {
    [ns, drop] = await testNamespace(cluster, "request-policy");
    const provider = await createPermissionGroup(cluster, ns, "db-readers");
    for (const group of existing) {
      if (group === "db-readers") continue;
      await custom.createNamespacedCustomObject({
        group: "bulwark.dev",
        version: "v1alpha1",
        namespace: ns,
        plural: "permissiongroups",
        body: permissionGroup(group, provider),
      });
    }
  });
  after(async () => drop());

  /** What the API server made of the pod: admitted (dry run), or refused with a message. */
  async function outcome(c: Case): Promise<{ admitted: V1Pod } | { refused: string }> {
    try {
      return {
        admitted: await cluster.core.createNamespacedPod({
          namespace: ns,
          body: podOf(c),
          dryRun: "All",
        }),
      };
    } catch (error) {
      return { refused: apiMessage(error) };
    }
  }

  /** What the mutation and the policy should make of it: undefined for admitted, else the message. */
  function expectation(c: Case): string | undefined {
    const rule = rulesVerdict(c, ns);
    if (rule !== undefined) return c.ownInit ? celMessage(rule) : `Pod ${ns}/${c.name}: ${rule}`;
    if (c.ownInit || existing.has(c.group)) return undefined;
    return `Pod ${ns}/${c.name}: ${PERMISSION_GROUP_ANNOTATION} names PermissionGroup "${c.group}", which does not exist in namespace ${ns}`;
  }

  it("decides every generated pod as planInjection and the group lookup do, with their message", async () => {
    const differences: string[] = [];
    const counts = { admitted: 0, refusedByMutation: 0, refusedByCel: 0 };
    for (const c of cases()) {
      const wanted = expectation(c);
      const got = await outcome(c);
      const what = JSON.stringify(c);
      if ("admitted" in got) {
        const first = got.admitted.spec?.initContainers?.[0]?.name;
        if (wanted !== undefined) differences.push(`${what}: admitted, expected ${wanted}`);
        else if (first !== "bulwark-init") differences.push(`${what}: admitted, not injected`);
        else counts.admitted++;
      } else if (wanted === undefined || !got.refused.endsWith(wanted)) {
        differences.push(`${what}: refused with ${got.refused}, expected ${wanted ?? "admitted"}`);
      } else {
        counts[c.ownInit ? "refusedByCel" : "refusedByMutation"]++;
      }
    }
    assert.deepEqual(differences, []);
    // The generator reaches every outcome, each many times.
    for (const [result, count] of Object.entries(counts)) {
      assert.ok(count >= 10, `${result}: ${count} cases`);
    }
  });

  it("refuses a pod carrying a refusal with that text, and admits an injected one without it", async () => {
    const refused = await rejection(() =>
      cluster.core.createNamespacedPod({
        namespace: ns,
        dryRun: "All",
        body: {
          metadata: {
            name: "mine",
            annotations: {
              [PERMISSION_GROUP_ANNOTATION]: "db-readers",
              [PERMISSION_REFUSAL_ANNOTATION]: "not today",
            },
          },
          spec: {
            initContainers: [{ name: "bulwark-init", image: "mine:1" }],
            containers: [{ name: "app", image: "registry.example/app:1" }],
          },
        },
      }),
    );
    assert.match(refused, /denied request: not today$/);
    // The mutation drops a refusal the creator wrote on a pod it injects.
    const injected = await cluster.core.createNamespacedPod({
      namespace: ns,
      dryRun: "All",
      body: {
        metadata: {
          name: "copied",
          annotations: {
            [PERMISSION_GROUP_ANNOTATION]: "db-readers",
            [PERMISSION_REFUSAL_ANNOTATION]: "copied",
          },
        },
        spec: { containers: [{ name: "app", image: "registry.example/app:1" }] },
      },
    });
    assert.equal(injected.metadata?.annotations?.[PERMISSION_REFUSAL_ANNOTATION], undefined);
    assert.equal(injected.spec?.initContainers?.[0]?.name, "bulwark-init");
  });
});
