// NetworkPolicies (networkPolicy.enabled): none by default; with it on, one per pod-network
// workload selecting exactly that workload's pods, on ports its container names; the gateway's
// traffic ports open to all, the permission server's API to injected pods and the Pepr module,
// admin and metrics to the values' scrapers; none for the host-network edge-health daemons.
// (test/integration/packaging/helm.test.ts renders the chart's and has the API server accept them.)
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { KubernetesObject, V1NetworkPolicy } from "@kubernetes/client-node";
import { defaultValues, valuesFrom, workloadManifests, type BulwarkValues } from "./manifests";
import { PERMISSION_MANAGED_LABEL } from "../core/names";
import { find, onlyContainer, podSpec, podTemplateLabels, selects } from "./testkit";

const IMAGE = "registry.example.com/team/bulwark:1.2.3";

function manifests(change: (v: BulwarkValues) => void = () => {}): KubernetesObject[] {
  const values = defaultValues(IMAGE);
  change(values);
  return workloadManifests(values);
}

const policiesOf = (objects: KubernetesObject[]) =>
  objects.filter(o => o.kind === "NetworkPolicy") as (V1NetworkPolicy & KubernetesObject)[];

/** Each ingress rule as [peers, port names]; peers absent means from anywhere. */
function rules(policy: V1NetworkPolicy): [unknown, unknown[]][] {
  return (policy.spec?.ingress ?? []).map(rule => [rule.from, (rule.ports ?? []).map(p => p.port)]);
}

const scrapers = [{ namespaceSelector: {}, podSelector: {} }];

describe("NetworkPolicies (networkPolicy.enabled)", () => {
  it("none by default", () => {
    assert.deepEqual(policiesOf(manifests()), []);
  });

  it("one per pod-network workload, selecting its pods only, on ports its container names", () => {
    const objects = manifests(v => void (v.networkPolicy.enabled = true));
    const policies = policiesOf(objects);
    assert.deepEqual(policies.map(p => p.metadata?.name).sort(), [
      "bulwark-gateway",
      "bulwark-permission-server",
    ]);
    const workloads: [string, string][] = [
      ["StatefulSet", "bulwark-gateway"],
      ["Deployment", "bulwark-permission-server"],
    ];
    const all = workloads.map(([kind, name]) => find<KubernetesObject>(objects, kind, name));
    for (const policy of policies) {
      assert.deepEqual(policy.spec?.policyTypes, ["Ingress"], "egress left alone");
      const selected = all.filter(w =>
        selects(policy.spec?.podSelector?.matchLabels, podTemplateLabels(w)),
      );
      assert.deepEqual(
        selected.map(w => w.metadata?.name),
        [policy.metadata?.name],
      );
      const named = new Set(onlyContainer(selected[0]!).ports?.map(p => p.name));
      for (const port of policy.spec?.ingress?.flatMap(r => r.ports ?? []) ?? []) {
        assert.ok(named.has(String(port.port)), `${policy.metadata?.name}: port ${port.port}`);
        assert.equal(port.protocol, "TCP");
      }
    }
  });

  it("gateway: HTTP and HTTPS from anywhere, admin (probes' port, /metrics) from the scrapers", () => {
    const policy = find<V1NetworkPolicy>(
      manifests(v => void (v.networkPolicy.enabled = true)),
      "NetworkPolicy",
      "bulwark-gateway",
    );
    assert.deepEqual(rules(policy), [
      [undefined, ["http", "https"]],
      [scrapers, ["admin"]],
    ]);
  });

  it("permission server: the API from injected pods in any namespace and from pepr-system; metrics from the scrapers", () => {
    const policy = find<V1NetworkPolicy>(
      manifests(v => void (v.networkPolicy.enabled = true)),
      "NetworkPolicy",
      "bulwark-permission-server",
    );
    assert.deepEqual(rules(policy), [
      [
        [
          {
            namespaceSelector: {},
            podSelector: { matchLabels: { [PERMISSION_MANAGED_LABEL]: "true" } },
          },
          { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "pepr-system" } } },
        ],
        ["api"],
      ],
      [scrapers, ["metrics"]],
    ]);
  });

  it("the scrapers are the values' selectors, on both policies", () => {
    const monitoring = {
      namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "monitoring" } },
      podSelector: {
        matchExpressions: [
          { key: "app.kubernetes.io/name", operator: "In" as const, values: ["prometheus"] },
        ],
      },
    };
    const policies = policiesOf(
      manifests(v => {
        v.networkPolicy = { enabled: true, metrics: monitoring };
      }),
    );
    for (const policy of policies) assert.deepEqual(rules(policy)[1]?.[0], [monitoring]);
  });

  it("none for the edge-health daemons (host network) nor for a workload turned off", () => {
    const objects = manifests(v => {
      v.networkPolicy.enabled = true;
      v.gateway.enabled = false;
    });
    assert.equal(podSpec(find(objects, "DaemonSet", "bulwark-edge-health")).hostNetwork, true);
    assert.deepEqual(
      policiesOf(objects).map(p => p.metadata?.name),
      ["bulwark-permission-server"],
    );
  });

  it("refuses a selector Kubernetes would refuse, naming the field", () => {
    const bad = valuesFrom(IMAGE, {
      networkPolicy: {
        metrics: { namespaceSelector: { matchExpressions: [{ key: "x", operator: "Is" }] } },
      },
    });
    assert.deepEqual(bad.ok ? [] : bad.errors.map(e => e.field), [
      "networkPolicy.metrics.namespaceSelector.matchExpressions.0.operator",
    ]);
    const typo = valuesFrom(IMAGE, { networkPolicy: { metrics: { namespaces: {} } } });
    assert.deepEqual(typo.ok ? [] : typo.errors.map(e => e.field), [
      "networkPolicy.metrics.namespaces",
    ]);
  });
});
