// The Helm chart renders the same objects as the manifest generators for the same values, over a
// matrix of values and releases (PodMonitors and NetworkPolicies on in some); `helm lint --strict`
// passes for each; the real API server accepts them (server-side dry run); it composes (two
// releases, a parent chart with global values); it refuses what `npm run build --values` refuses,
// naming the same field; and an upgrade from the chart before release-prefixed names changes no
// immutable field. Also Pepr's generated chart for
// the module, told the init image the same way, named bulwark-module.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { KubernetesObject, V1Deployment, V1StatefulSet } from "@kubernetes/client-node";
import { dump, load } from "js-yaml";
import { MODULE_CHART, MODULE_MANIFEST, ROOT } from "../../../packaging/build";
import { applyObjects, toYaml, waitForCrdsEstablished } from "../../../hack/control-plane/kube";
import { helm, renderChart } from "../../../hack/helm/helm";
import {
  defaultValues,
  valuesFrom,
  workloadManifests,
  type BulwarkValues,
} from "../../../packaging/manifests";
import { configureModuleChart } from "../../../packaging/manifests/pepr-chart";
import { testCluster, testNamespace } from "../../harness/cluster";
import packageJson from "../../../package.json";

const cluster = testCluster();
const CHART = join(ROOT, "charts", "bulwark");
const IMAGE = "registry.example.com/platform/bulwark:9.9.9";
/** Helm's own labels, only on top-level metadata; everything else must match exactly. */
const HELM_LABELS = ["app.kubernetes.io/managed-by", "helm.sh/chart"];
/** The last commit whose chart had no release-prefixed names (the upgrade test's "before"). */
const BEFORE_PREFIXES = "e175035477c8566f0465420c12c9ca2f3975135e";

/**
 * The prometheus-operator's PodMonitor CRD, cut down to the fields the chart writes (names and
 * types as in its monitoring.coreos.com_podmonitors.yaml), without preserve-unknown-fields: a
 * server-side apply of a field it does not declare is refused, so the dry runs check the chart's
 * PodMonitors' shape. Installed for this file only, deleted after it.
 */
const PODMONITOR_CRD = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: "podmonitors.monitoring.coreos.com" },
  spec: {
    group: "monitoring.coreos.com",
    scope: "Namespaced",
    names: {
      kind: "PodMonitor",
      listKind: "PodMonitorList",
      plural: "podmonitors",
      singular: "podmonitor",
    },
    versions: [
      {
        name: "v1",
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: {
            type: "object",
            required: ["spec"],
            properties: {
              spec: {
                type: "object",
                required: ["selector"],
                properties: {
                  selector: {
                    type: "object",
                    properties: {
                      matchLabels: { type: "object", additionalProperties: { type: "string" } },
                    },
                  },
                  podMetricsEndpoints: {
                    type: "array",
                    items: {
                      type: "object",
                      properties: {
                        port: { type: "string" },
                        path: { type: "string" },
                        interval: {
                          type: "string",
                          pattern:
                            "^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$",
                        },
                        scheme: { type: "string", enum: ["http", "https", "HTTP", "HTTPS"] },
                        tlsConfig: {
                          type: "object",
                          properties: {
                            ca: {
                              type: "object",
                              properties: {
                                secret: {
                                  type: "object",
                                  required: ["key"],
                                  properties: {
                                    key: { type: "string" },
                                    name: { type: "string" },
                                    optional: { type: "boolean" },
                                  },
                                },
                              },
                            },
                            serverName: { type: "string" },
                            insecureSkipVerify: { type: "boolean" },
                          },
                        },
                      },
                    },
                  },
                },
              },
            },
          },
        },
      },
    ],
  },
};

const scratch = mkdtempSync(join(tmpdir(), "bulwark-helm-test-"));
after(() => rmSync(scratch, { recursive: true, force: true }));

/** The chart's values: all but the namespace and release name, which are Helm's command line. */
function chartValues(values: BulwarkValues): object {
  const rest: Partial<BulwarkValues> = { ...values };
  delete rest.namespace;
  delete rest.release;
  return rest;
}

function render(values: BulwarkValues): KubernetesObject[] {
  return renderChart(CHART, {
    release: values.release,
    namespace: values.namespace,
    values: chartValues(values),
  });
}

let lints = 0;

/**
 * `helm lint --strict` of a chart with these values, given as a file. A parent's lint renders its
 * subcharts and checks their schemas (--with-subcharts would lint them with the parent's values).
 */
function lint(chart: string, values: object, namespace: string): string {
  const file = join(scratch, `lint-${++lints}.yaml`);
  writeFileSync(file, toYaml(values));
  return helm(["lint", "--strict", chart, "-f", file, "-n", namespace]);
}

const key = (o: KubernetesObject) =>
  `${o.kind} ${o.metadata?.namespace ?? ""}/${o.metadata?.name ?? ""}`;

function withoutHelmLabels(object: KubernetesObject): KubernetesObject {
  const copy = structuredClone(object);
  for (const label of HELM_LABELS) delete copy.metadata?.labels?.[label];
  return copy;
}

/** The rendered objects and the generators', keyed, compared field by field. */
function compare(objects: KubernetesObject[], values: BulwarkValues): void {
  for (const object of objects) {
    assert.equal(object.metadata?.labels?.["app.kubernetes.io/managed-by"], "Helm", key(object));
    assert.equal(
      object.metadata?.labels?.["app.kubernetes.io/instance"],
      values.release,
      key(object),
    );
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

/** Every switch of the values turned. */
function variant(): BulwarkValues {
  const values = defaultValues(IMAGE);
  values.imagePullPolicy = "Always";
  values.imagePullSecrets = [{ name: "regcred" }, { name: "mirror" }];
  values.commonLabels = { "example.com/team": "platform", "example.com/cost-center": "42a" };
  values.metrics.scrape = false;
  values.metrics.podMonitor = { enabled: true, interval: "", labels: { release: "kps" } };
  values.networkPolicy = {
    enabled: true,
    metrics: {
      namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "monitoring" } },
      podSelector: {
        matchExpressions: [
          { key: "app.kubernetes.io/name", operator: "In", values: ["prometheus", "agent"] },
          { key: "example.com/scraper", operator: "Exists" },
        ],
      },
    },
  };
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
    ingressClass: { create: true, default: true },
    nodeSelector: { "kubernetes.io/os": "linux" },
    tolerations: [{ key: "dedicated", operator: "Equal", value: "ingress", effect: "NoSchedule" }],
    affinity: {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [
            { matchExpressions: [{ key: "node-role/ingress", operator: "Exists" }] },
          ],
        },
      },
    },
    topologySpreadConstraints: [
      {
        maxSkew: 1,
        topologyKey: "topology.kubernetes.io/zone",
        whenUnsatisfiable: "ScheduleAnyway",
        labelSelector: { matchLabels: { "app.kubernetes.io/name": "bulwark-gateway" } },
      },
    ],
    priorityClassName: "system-cluster-critical",
    labels: { "example.com/tier": "edge" },
    annotations: { "example.com/owner": "netops" },
    podLabels: { "example.com/mesh": "off" },
    podAnnotations: { "example.com/log-format": "json" },
  });
  values.gateway.ports = { http: 8081, https: 8444, admin: 9191 };
  values.gateway.service = {
    type: "NodePort",
    http: 8080,
    https: 8443,
    annotations: { "service.beta.kubernetes.io/aws-load-balancer-type": "nlb" },
    externalTrafficPolicy: "Cluster",
  };
  values.gateway.persistence = { enabled: false, size: "2Gi", storageClassName: "fast" };
  values.gateway.resources.limits.cpu = 4;
  values.permissionServer.tls.enabled = true;
  values.permissionServer.replicas = 3;
  values.permissionServer.metricsPort = 9475;
  values.permissionServer.providers = [
    { name: "packaging-authz", spec: { type: "http", address: "https://authz.example.com" } },
  ];
  Object.assign(values.permissionServer, {
    tolerations: [{ operator: "Exists", effect: "NoExecute", tolerationSeconds: 30 }],
    priorityClassName: "system-cluster-critical",
    annotations: { "example.com/restart-on": "secret-change" },
    podLabels: { "example.com/tier": "control" },
  });
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
  values.edgeHealth.priorityClassName = "";
  values.edgeHealth.labels = { "example.com/tier": "node" };
  values.edgeHealth.podAnnotations = { "example.com/log-format": "json" };
  values.edgeHealth.zones = {
    configNamespace: "edge-system",
    manageConfig: true,
    taintZoneAdmission: true,
    maxUnknownSeconds: 600,
  };
  return values;
}

/** A second release in the same namespace: the IngressClass is the first one's. */
function secondRelease(): BulwarkValues {
  const values = defaultValues(IMAGE, { release: "edge" });
  values.gateway.ingressClass.create = false;
  values.gateway.watchNamespaces = ["edge-apps"];
  values.gateway.service.type = "ClusterIP";
  values.permissionServer.enabled = false;
  values.edgeHealth.enabled = false;
  return values;
}

/** Release names containing "bulwark", a fullnameOverride, components off, plain HTTP. */
function renamed(): BulwarkValues[] {
  const canary = defaultValues(IMAGE, { release: "bulwark-canary", namespace: "bulwark-canary" });
  canary.permissionServer.tls.enabled = false;
  canary.metrics.podMonitor = { enabled: true, interval: "1m30s", labels: {} };
  canary.networkPolicy.enabled = true;
  canary.gateway.persistence.storageClassName = "standard";
  const override = defaultValues(IMAGE, { release: "platform-security", namespace: "platform" });
  override.fullnameOverride = "guard";
  override.gateway.enabled = false;
  override.edgeHealth.zones.manageConfig = true;
  override.edgeHealth.zones.configNamespace = "platform";
  return [canary, override];
}

const MATRIX: [string, () => BulwarkValues][] = [
  ["the defaults", () => defaultValues(IMAGE)],
  ["every switch turned", variant],
  ["a second release in the same namespace", secondRelease],
  ["release bulwark-canary, plain HTTP", () => renamed()[0] as BulwarkValues],
  ["fullnameOverride guard, no gateway", () => renamed()[1] as BulwarkValues],
];

describe("charts/bulwark", () => {
  before(async () => {
    // The releases' namespaces (helm --create-namespace) and the zone ConfigMap's, for real.
    const names = ["bulwark-system", "edge-system", "bulwark-canary", "platform"];
    const namespaces = names.map(name => ({
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name },
    }));
    assert.deepEqual(await applyObjects(cluster.kc, namespaces), []);
    assert.deepEqual(await applyObjects(cluster.kc, [PODMONITOR_CRD]), []);
    await waitForCrdsEstablished(cluster.kc, [PODMONITOR_CRD.metadata.name]);
  });

  after(async () => {
    await cluster.objects.delete(PODMONITOR_CRD);
  });

  it("the PodMonitor CRD the dry runs use refuses a field it does not declare", async () => {
    const monitor = render(variant()).find(o => o.kind === "PodMonitor") as KubernetesObject & {
      spec: { podMetricsEndpoints: object[] };
    };
    assert.ok(monitor);
    assert.deepEqual(await applyObjects(cluster.kc, [monitor], { dryRun: true }), []);
    monitor.spec.podMetricsEndpoints = [{ port: "admin", scrapeEvery: "30s" }];
    const refused = await applyObjects(cluster.kc, [monitor], { dryRun: true });
    assert.equal(refused.length, 1);
    assert.match(refused[0]?.message ?? "", /scrapeEvery/);
  });

  for (const [name, values] of MATRIX) {
    it(`renders exactly the generators' objects, lints strictly, and is accepted: ${name}`, async t => {
      const objects = render(values());
      compare(objects, values());
      const { namespace } = values();
      const lintOut = lint(CHART, chartValues(values()), namespace);
      assert.match(lintOut, /1 chart\(s\) linted, 0 chart\(s\) failed/);
      t.diagnostic(`${objects.length} objects`);
      assert.deepEqual(await applyObjects(cluster.kc, objects, { dryRun: true }), []);
    });
  }

  it("two releases share no object: names, ClusterRoles and policies are the release's", () => {
    const first = new Set(render(defaultValues(IMAGE)).map(key));
    const second = render(secondRelease());
    assert.deepEqual(
      second.map(key).filter(k => first.has(k)),
      [],
    );
    assert.ok(
      second.some(o => o.kind === "ClusterRole" && o.metadata?.name === "edge-bulwark-gateway"),
    );
  });

  it("composes as a subchart: a parent's global values pass, names follow its release", async () => {
    const parent = join(scratch, "platform");
    mkdirSync(join(parent, "charts"), { recursive: true });
    mkdirSync(join(parent, "templates"));
    cpSync(CHART, join(parent, "charts", "bulwark"), { recursive: true, dereference: true });
    writeFileSync(
      join(parent, "Chart.yaml"),
      dump({
        apiVersion: "v2",
        name: "platform",
        version: "1.0.0",
        description: "A platform that includes Bulwark",
        dependencies: [{ name: "bulwark", version: packageJson.version }],
      }),
    );
    const values = defaultValues(IMAGE, { release: "platform" });
    values.gateway.nodeSelector = { "kubernetes.io/os": "linux" };
    values.gateway.ingressClass.create = false;
    const parentValues = {
      global: { imageRegistry: "mirror.example.com", labels: { team: "platform" } },
      bulwark: chartValues(values),
    };
    const objects = renderChart(parent, {
      release: "platform",
      namespace: "bulwark-system",
      values: parentValues,
    });
    compare(objects, values);
    assert.ok(objects.some(o => o.metadata?.name === "platform-bulwark-gateway"));
    assert.match(
      lint(parent, parentValues, "bulwark-system"),
      /1 chart\(s\) linted, 0 chart\(s\) failed/,
    );
    assert.deepEqual(await applyObjects(cluster.kc, objects, { dryRun: true }), []);
  });

  it("refuses what npm run build --values refuses, naming the same field", () => {
    const cases: [overrides: object, field: string, helmPath: RegExp][] = [
      [{ gateway: { replicas: 0 } }, "gateway.replicas", /\/gateway\/replicas/],
      [{ gateway: { nodeSelectr: {} } }, "gateway.nodeSelectr", /\/gateway.*nodeSelectr/],
      [
        { gateway: { service: { externalTrafficPolicy: "Sometimes" } } },
        "gateway.service.externalTrafficPolicy",
        /\/gateway\/service\/externalTrafficPolicy/,
      ],
      [{ namespace: "elsewhere" }, "namespace", /namespace/],
      [{ fullnameOverride: "Not_A_Label" }, "fullnameOverride", /\/fullnameOverride/],
      [{ imagePullSecrets: ["regcred"] }, "imagePullSecrets.0", /\/imagePullSecrets\/0/],
      [
        { edgeHealth: { priorityClassName: 5 } },
        "edgeHealth.priorityClassName",
        /\/edgeHealth\/priorityClassName/,
      ],
      [
        { networkPolicy: { metrics: { podSelector: { matchExpressions: [{ key: "a" }] } } } },
        "networkPolicy.metrics.podSelector.matchExpressions.0.operator",
        /\/networkPolicy\/metrics\/podSelector\/matchExpressions\/0/,
      ],
      [
        { permissionServer: { tolerations: [{ operator: "Maybe" }] } },
        "permissionServer.tolerations.0.operator",
        /\/permissionServer\/tolerations\/0\/operator/,
      ],
    ];
    for (const [overrides, field, helmPath] of cases) {
      const built = valuesFrom(IMAGE, overrides);
      assert.equal(built.ok, false, field);
      assert.ok(!built.ok && built.errors.some(e => e.field === field), `build names ${field}`);
      assert.throws(
        () =>
          renderChart(CHART, {
            release: "bulwark",
            namespace: "bulwark-system",
            values: overrides,
          }),
        (error: { stderr?: string }) => helmPath.test(error.stderr ?? ""),
        `helm names ${field}`,
      );
    }
    // A release name that makes too long a prefix: both name fullnameOverride.
    const long = "a".repeat(34);
    assert.ok(!valuesFrom(IMAGE, {}, { release: long }).ok);
    assert.throws(
      () => renderChart(CHART, { release: long, namespace: "bulwark-system", values: {} }),
      (error: { stderr?: string }) =>
        /fullnameOverride: the names' prefix/.test(error.stderr ?? ""),
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

  it("NOTES.txt says what was installed, how to check it, and what to do next", () => {
    const notes = helm([
      "install",
      "bulwark",
      CHART,
      "-n",
      "bulwark-system",
      "--dry-run=client",
      "--set",
      `image=${IMAGE}`,
    ]);
    for (const expected of [
      /kubectl -n bulwark-system get statefulset,deployment,daemonset -l app\.kubernetes\.io\/instance=bulwark/,
      /bulwark-gateway/,
      /https:\/\/bulwark-permission-server\.bulwark-system\.svc:8443/,
      /bulwark-permission-server-tls/,
      /bulwark-edge-health-hmac/,
      /bulwark install secrets -n bulwark-system --release bulwark\n/,
      /npm run build -- --image registry\.example\.com\/platform\/bulwark:9\.9\.9 --namespace bulwark-system --release bulwark/,
    ]) {
      assert.match(notes, expected);
    }
  });

  it("an upgrade from the chart before release-prefixed names changes no immutable field", async t => {
    const old = join(scratch, "before");
    mkdirSync(old);
    try {
      execFileSync("git", ["-C", ROOT, "cat-file", "-e", `${BEFORE_PREFIXES}^{commit}`], {
        stdio: "ignore",
      });
    } catch {
      t.skip(`commit ${BEFORE_PREFIXES} is not in this checkout`);
      return;
    }
    const archive = execFileSync("git", ["-C", ROOT, "archive", BEFORE_PREFIXES, "charts/bulwark"]);
    execFileSync("tar", ["-x", "-C", old], { input: archive });
    // crds/ is a link out of the chart, dangling here; `helm template` renders no CRDs anyway.
    rmSync(join(old, "charts", "bulwark", "crds"), { force: true, recursive: true });
    const [namespace, remove] = await testNamespace(cluster, "bulwark-upgrade");
    after(remove);
    const values = defaultValues(IMAGE, { namespace });
    const inNamespace = (o: KubernetesObject) => o.metadata?.namespace === namespace;
    const before = renderChart(join(old, "charts", "bulwark"), {
      release: "bulwark",
      namespace,
      values: { image: IMAGE },
    }).filter(inNamespace);
    assert.deepEqual(await applyObjects(cluster.kc, before), [], "the old chart, for real");
    const now = render(values).filter(inNamespace);
    assert.deepEqual(await applyObjects(cluster.kc, now, { dryRun: true }), []);
    // The test would see it: the instance label in an immutable place is refused.
    const sts = structuredClone(now.find(o => o.kind === "StatefulSet")) as V1StatefulSet &
      KubernetesObject;
    const claim = sts.spec?.volumeClaimTemplates?.[0]?.metadata;
    if (claim?.labels) claim.labels["app.kubernetes.io/instance"] = "bulwark";
    const deployment = structuredClone(now.find(o => o.kind === "Deployment")) as V1Deployment &
      KubernetesObject;
    if (deployment.spec)
      deployment.spec.selector.matchLabels = deployment.spec.template.metadata?.labels;
    const refused = await applyObjects(cluster.kc, [sts, deployment], { dryRun: true });
    assert.equal(refused.length, 2, JSON.stringify(refused));
  });

  it("Pepr's module chart: bulwark-module at the package's version, given the init image, accepted", async t => {
    assert.ok(
      existsSync(join(MODULE_CHART, "Chart.yaml")),
      `${MODULE_CHART} is written by pepr build (test/run.ts runs it)`,
    );
    // What `npm run build` does to it, on a copy (dist/ is the run's).
    const chart = mkdtempSync(join(tmpdir(), "bulwark-module-chart-"));
    after(() => rmSync(chart, { recursive: true, force: true }));
    cpSync(MODULE_CHART, chart, { recursive: true });
    // A workload release named otherwise: the module is told its permission server's address.
    configureModuleChart(chart, defaultValues(IMAGE, { release: "edge" }), MODULE_MANIFEST);
    const meta = load(readFileSync(join(chart, "Chart.yaml"), "utf8")) as Record<string, unknown>;
    assert.equal(meta.name, "bulwark-module");
    assert.equal(meta.version, packageJson.version);
    assert.equal(meta.appVersion, packageJson.version);
    const values = load(readFileSync(join(chart, "values.yaml"), "utf8")) as object;
    const objects = renderChart(chart, {
      release: "bulwark-module",
      namespace: "pepr-system",
      values: { ...values, global: { imageRegistry: "mirror.example.com" } },
    });
    assert.match(lint(chart, values, "pepr-system"), /0 chart\(s\) failed/);
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
      const env = new Map(container?.env?.map(e => [e.name, e.value]));
      assert.equal(env.get("BULWARK_INIT_IMAGE"), IMAGE);
      assert.equal(
        env.get("BULWARK_PERMISSION_SERVER"),
        "https://edge-bulwark-permission-server.bulwark-system.svc:8443",
      );
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
