// The Helm chart renders the same objects as the manifest generators for the same values, and the
// real API server accepts them (server-side dry run). Also Pepr's generated chart for the module,
// told the init image the same way.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { KubernetesObject } from "@kubernetes/client-node";
import { load } from "js-yaml";
import { MODULE_CHART, MODULE_MANIFEST, ROOT } from "../../../packaging/build";
import { applyObjects } from "../../../hack/control-plane/kube";
import { renderChart } from "../../../hack/helm/helm";
import { defaultValues, workloadManifests, type BulwarkValues } from "../../../packaging/manifests";
import { configureModuleChart } from "../../../packaging/manifests/pepr-chart";
import { testCluster } from "../../harness/cluster";

const cluster = testCluster();
const CHART = join(ROOT, "charts", "bulwark");
const IMAGE = "registry.example.com/platform/bulwark:9.9.9";
/** Helm's own labels, only on top-level metadata; everything else must match exactly. */
const HELM_LABELS = ["app.kubernetes.io/managed-by", "helm.sh/chart"];

function render(values: BulwarkValues): KubernetesObject[] {
  const { namespace, ...chartValues } = values;
  return renderChart(CHART, { release: "bulwark", namespace, values: chartValues });
}

const key = (o: KubernetesObject) =>
  `${o.kind} ${o.metadata?.namespace ?? ""}/${o.metadata?.name ?? ""}`;

function withoutHelmLabels(object: KubernetesObject): KubernetesObject {
  const copy = structuredClone(object);
  for (const label of HELM_LABELS) delete copy.metadata?.labels?.[label];
  return copy;
}

/** The chart's objects and the generators', keyed, for a field-by-field comparison. */
function compare(values: BulwarkValues): void {
  const objects = render(values);
  for (const object of objects) {
    assert.equal(object.metadata?.labels?.["app.kubernetes.io/managed-by"], "Helm", key(object));
  }
  const rendered = new Map(objects.map(o => [key(o), withoutHelmLabels(o)]));
  // Namespaces are Helm's (--create-namespace) or the user's, never the chart's.
  const generated = new Map(
    workloadManifests(values)
      .filter(o => o.kind !== "Namespace")
      .map(o => [key(o), o]),
  );
  assert.deepEqual([...rendered.keys()].sort(), [...generated.keys()].sort());
  for (const [name, object] of generated) {
    assert.deepEqual(rendered.get(name), object, name);
  }
}

function variant(): BulwarkValues {
  const values = defaultValues(IMAGE);
  values.imagePullPolicy = "Always";
  values.metrics.scrape = false;
  Object.assign(values.gateway, {
    replicas: 4,
    ordinalStart: 3,
    workers: 4,
    watchNamespaces: ["shop", "blog"],
    checksum: {
      ingress: true,
      secret: "observe",
      publisherNamespaces: ["release", "bulwark-system"],
      requireSignature: true,
      keysConfigMap: "publisher-keys",
    },
    ingressClass: { default: true },
  });
  values.gateway.ports = { http: 8081, https: 8444, admin: 9191 };
  values.gateway.service = { type: "ClusterIP", http: 8080, https: 8443 };
  values.gateway.persistence = { enabled: false, size: "2Gi", storageClassName: "fast" };
  values.permissionServer.tls.enabled = true;
  values.permissionServer.replicas = 3;
  values.permissionServer.providers = [
    { name: "packaging-authz", spec: { type: "http", address: "https://authz.example.com" } },
  ];
  values.edgeHealth.port = 51015;
  values.edgeHealth.checks = {
    daemon: "weight=0.6",
    kubelet: "weight=1,timeout=3",
    tcp: "weight=0.5,port=22",
    kubeletCaHostPath: "/etc/kubernetes/pki/ca.crt",
  };
  // Helm merges maps with the chart's defaults (drop a default key with null), so a superset.
  values.edgeHealth.nodeSelector = {
    "superedge.io/node-edge": "enable",
    "node-role.kubernetes.io/edge": "",
  };
  values.edgeHealth.tolerations = [{ key: "edge", operator: "Exists", effect: "NoSchedule" }];
  values.edgeHealth.zones = {
    configNamespace: "edge-system",
    manageConfig: true,
    taintZoneAdmission: true,
    maxUnknownSeconds: 600,
  };
  return values;
}

describe("charts/bulwark", () => {
  before(async () => {
    // The release's namespace (helm --create-namespace) and the zone ConfigMap's, for real.
    const namespaces = ["bulwark-system", "edge-system"].map(name => ({
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name },
    }));
    assert.deepEqual(await applyObjects(cluster.kc, namespaces), []);
  });

  it("renders exactly the generators' objects with the default values", () => {
    compare(defaultValues(IMAGE));
  });

  it("renders exactly the generators' objects with every switch turned", () => {
    compare(variant());
  });

  it("refuses a bad value, naming it (values.schema.json)", () => {
    const values = defaultValues(IMAGE);
    values.gateway.replicas = 0;
    assert.throws(
      () => render(values),
      (error: { stderr?: string }) => /\/gateway\/replicas/.test(error.stderr ?? ""),
    );
  });

  it("refuses check values that contradict each other, as the generators do", () => {
    const values = defaultValues(IMAGE);
    values.edgeHealth.checks.kubelet = " off";
    values.edgeHealth.checks.kubeletCaHostPath = "/etc/kubernetes/pki/ca.crt";
    assert.throws(
      () => render(values),
      (error: { stderr?: string }) =>
        /edgeHealth\.checks\.kubeletCaHostPath: is set but the kubelet check is off/.test(
          error.stderr ?? "",
        ),
    );
    values.edgeHealth.checks.kubelet = "ca-file=/x";
    assert.throws(
      () => render(values),
      (error: { stderr?: string }) =>
        /edgeHealth\.checks\.kubelet: names a ca-file/.test(error.stderr ?? ""),
    );
  });

  it("renders what the API server accepts (server-side dry run), defaults and variant", async () => {
    for (const values of [defaultValues(IMAGE), variant()]) {
      const objects = render(values);
      assert.ok(objects.length > 20);
      assert.deepEqual(await applyObjects(cluster.kc, objects, { dryRun: true }), []);
    }
  });

  it("Pepr's module chart, given the init image, renders what the API server accepts", async t => {
    assert.ok(
      existsSync(join(MODULE_CHART, "Chart.yaml")),
      `${MODULE_CHART} is written by pepr build (test/run.ts runs it)`,
    );
    // What `npm run build` does to it, on a copy (dist/ is the run's).
    const chart = mkdtempSync(join(tmpdir(), "bulwark-module-chart-"));
    after(() => rmSync(chart, { recursive: true, force: true }));
    cpSync(MODULE_CHART, chart, { recursive: true });
    configureModuleChart(chart, defaultValues(IMAGE), MODULE_MANIFEST);
    const values = load(readFileSync(join(chart, "values.yaml"), "utf8")) as object;
    const objects = renderChart(chart, {
      release: "bulwark-module",
      namespace: "pepr-system",
      values,
    });
    const deployments = objects.filter(o => o.kind === "Deployment") as {
      spec: {
        template: {
          spec: { containers: { image: string; env?: { name: string; value?: string }[] }[] };
        };
      };
    }[];
    assert.equal(deployments.length, 2, "admission and watcher");
    for (const deployment of deployments) {
      const [container] = deployment.spec.template.spec.containers;
      assert.match(container?.image ?? "", /^ghcr\.io\/defenseunicorns\/pepr\/controller:/);
      assert.equal(container?.env?.find(e => e.name === "BULWARK_INIT_IMAGE")?.value, IMAGE);
    }
    // Node and endpoint rules fail open, as in manifests/10-pepr-module.yaml.
    const webhooks = objects
      .filter(o => o.kind?.endsWith("WebhookConfiguration"))
      .flatMap(
        o =>
          (
            o as {
              webhooks?: {
                name: string;
                failurePolicy?: string;
                rules?: { resources?: string[] }[];
              }[];
            }
          ).webhooks ?? [],
      );
    const nodes = webhooks.filter(w => w.rules?.some(r => r.resources?.includes("nodes")));
    assert.ok(nodes.length > 0, "the module has a node rule");
    for (const webhook of nodes) assert.equal(webhook.failurePolicy, "Ignore", webhook.name);
    const pods = webhooks.filter(w => w.rules?.some(r => r.resources?.includes("pods")));
    for (const webhook of pods) assert.equal(webhook.failurePolicy, "Fail", webhook.name);
    const namespaces = objects.filter(o => o.kind === "Namespace");
    assert.deepEqual(await applyObjects(cluster.kc, namespaces), []);
    t.diagnostic(`${objects.length} objects in Pepr's chart`);
    assert.deepEqual(
      await applyObjects(
        cluster.kc,
        objects.filter(o => o.kind !== "Namespace"),
        { dryRun: true },
      ),
      [],
    );
  });
});
