// `npm run build -- --image`: which image, and how the Pepr module's controllers (manifests and
// Pepr's own chart) are told to inject it; the uninstall plan's pure parts.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type {
  KubernetesObject,
  V1Deployment,
  V1Pod,
  V1PodDisruptionBudget,
} from "@kubernetes/client-node";
import { imageFromArgs, ROOT, valuesFromArgs } from "./build";
import { readYamlObjects } from "../hack/control-plane/kube";
import { configureModule, defaultValues, DEFAULT_IMAGE } from "./manifests";
import {
  configuredChartValues,
  moduleChartSchema,
  moduleChartYaml,
  repairChartYaml,
  webhookTemplates,
} from "./manifests/pepr-chart";
import { load, loadAll } from "js-yaml";
import { loadSettings as podPermissionSettings } from "../capabilities/pod-permission/settings";
import { loadGuardSettings as guardSettings } from "../capabilities/ingress-guard/settings";
import { BULWARK_CRDS, isModuleObject, PHASES, podsWithFinalizer } from "../cli/uninstall";
import packageJson from "../package.json";

const IMAGE = "registry.example.com/bulwark:2.0.0";

/** A Deployment as `pepr build` writes it (trimmed), with an env var of its own. */
function peprDeployment(name: string): KubernetesObject {
  const deployment: V1Deployment = {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name, namespace: "pepr-system" },
    spec: {
      selector: { matchLabels: { app: name } },
      template: {
        spec: {
          containers: [
            {
              name: "server",
              image: "ghcr.io/defenseunicorns/pepr/controller:v1.1.4",
              env: [
                { name: "LOG_LEVEL", value: "info" },
                { name: "BULWARK_INIT_IMAGE", value: "stale" },
              ],
            },
          ],
        },
      },
    },
  };
  return deployment as KubernetesObject;
}

describe("npm run build -- --image", () => {
  it("takes --image, --image=, then $BULWARK_IMAGE, then the release's image", () => {
    assert.equal(imageFromArgs(["--image", IMAGE], {}), IMAGE);
    assert.equal(imageFromArgs([`--image=${IMAGE}`], { BULWARK_IMAGE: "other" }), IMAGE);
    assert.equal(imageFromArgs([], { BULWARK_IMAGE: IMAGE }), IMAGE);
    assert.equal(imageFromArgs([], {}), `ghcr.io/bulwark-dev/bulwark:${packageJson.version}`);
    assert.equal(DEFAULT_IMAGE, `ghcr.io/bulwark-dev/bulwark:${packageJson.version}`);
  });

  it("refuses --image without a value", () => {
    assert.throws(() => imageFromArgs(["--image"], {}), /--image needs a value/);
    assert.throws(() => imageFromArgs(["--image="], {}), /--image needs a value/);
  });

  it("takes --values FILE with the chart's keys, merged over the defaults as Helm merges", () => {
    const dir = mkdtempSync(join(tmpdir(), "bulwark-values-"));
    try {
      const file = join(dir, "values.yaml");
      writeFileSync(
        file,
        [
          "gateway: {replicas: 3, watchNamespaces: [shop]}",
          "permissionServer: {tls: {enabled: true}}",
          'edgeHealth: {nodeSelector: {"superedge.io/node-edge": null, "node-role.kubernetes.io/edge": ""}}',
        ].join("\n"),
      );
      const values = valuesFromArgs(["--image", IMAGE, "--values", file], {});
      assert.equal(values.image, IMAGE);
      assert.equal(values.gateway.replicas, 3);
      assert.deepEqual(values.gateway.watchNamespaces, ["shop"]);
      assert.equal(values.gateway.ports.admin, 9090, "untouched keys keep their defaults");
      assert.equal(values.permissionServer.tls.enabled, true);
      assert.equal(values.permissionServer.tls.secretName, "", "empty: the release's own name");
      assert.deepEqual(values.edgeHealth.nodeSelector, { "node-role.kubernetes.io/edge": "" });
      writeFileSync(file, "gateway: {replicas: 0}\nedgeHealth: {port: http}\n");
      assert.throws(
        () => valuesFromArgs([`--values=${file}`], {}),
        (error: Error) =>
          error.message.includes("gateway.replicas") && error.message.includes("edgeHealth.port"),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("refuses a values file with a key Helm's schema refuses; --namespace and --release place it", () => {
    const dir = mkdtempSync(join(tmpdir(), "bulwark-values-"));
    try {
      const file = join(dir, "values.yaml");
      writeFileSync(file, "gateway: {replicas: 3, nodeSelectr: {pool: edge}}\nnamespace: edge\n");
      assert.throws(
        () => valuesFromArgs(["--values", file], {}),
        (error: Error) =>
          error.message.includes("gateway.nodeSelectr: is not a value of the chart") &&
          error.message.includes("namespace: is the release's, not a value: --namespace NS"),
      );
      writeFileSync(file, "gateway: {nodeSelector: {pool: edge}}\n");
      const values = valuesFromArgs(
        ["--values", file, "--namespace", "edge-system", "--release=edge"],
        {},
      );
      assert.equal(values.namespace, "edge-system");
      assert.equal(values.release, "edge");
      assert.deepEqual(values.gateway.nodeSelector, { pool: "edge" });
      assert.equal(valuesFromArgs([], {}).release, "bulwark");
      assert.throws(() => valuesFromArgs(["--release"], {}), /--release needs a value/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("adds a PodDisruptionBudget for the admission controller only, selecting its pods", () => {
    const admission = peprDeployment("pepr-bulwark") as V1Deployment;
    admission.spec!.selector.matchLabels = {
      app: "pepr-bulwark",
      "pepr.dev/controller": "admission",
    };
    const objects = [admission, peprDeployment("pepr-bulwark-watcher")] as KubernetesObject[];
    const configured = configureModule(objects, defaultValues(IMAGE));
    assert.deepEqual(
      configured.map(o => `${o.kind}/${o.metadata?.name}`),
      [
        "Deployment/pepr-bulwark",
        "PodDisruptionBudget/pepr-bulwark",
        "Deployment/pepr-bulwark-watcher",
      ],
    );
    const budget = configured[1] as V1PodDisruptionBudget;
    assert.equal(budget.metadata?.namespace, "pepr-system");
    assert.equal(budget.spec?.maxUnavailable, 1);
    assert.deepEqual(budget.spec?.selector, admission.spec?.selector);
  });

  it("opens the watcher's metrics port, with scrape annotations and, when asked, a PodMonitor", () => {
    const watcher = peprDeployment("pepr-bulwark-watcher") as V1Deployment;
    watcher.spec!.selector.matchLabels = { app: "w", "pepr.dev/controller": "watcher" };
    const values = defaultValues(IMAGE);
    values.metrics.podMonitor.enabled = true;
    const configured = configureModule([watcher as KubernetesObject], values);
    assert.deepEqual(
      configured.map(o => o.kind),
      ["Deployment", "PodMonitor"],
    );
    const template = (configured[0] as V1Deployment).spec!.template;
    const container = template.spec!.containers[0]!;
    assert.deepEqual(container.ports, [{ name: "bulwark-metrics", containerPort: 9464 }]);
    assert.equal(container.env?.find(e => e.name === "BULWARK_METRICS_PORT")?.value, "9464");
    assert.equal(template.metadata?.annotations?.["prometheus.io/port"], "9464");
    const monitor = configured[1] as KubernetesObject & {
      spec: { selector: unknown; podMetricsEndpoints: { port: string }[] };
    };
    assert.equal(monitor.metadata?.namespace, "pepr-system");
    assert.deepEqual(monitor.spec.selector, watcher.spec?.selector);
    assert.equal(monitor.spec.podMetricsEndpoints[0]?.port, "bulwark-metrics");
    // What the capability reads from that environment.
    const env = Object.fromEntries((container.env ?? []).map(e => [e.name, e.value]));
    assert.equal(guardSettings(env as NodeJS.ProcessEnv).metricsPort, 9464);
  });

  it("with metrics.modulePort 0, serves nothing and opens no port", () => {
    const watcher = peprDeployment("pepr-bulwark-watcher") as V1Deployment;
    watcher.spec!.selector.matchLabels = { app: "w", "pepr.dev/controller": "watcher" };
    const values = defaultValues(IMAGE);
    values.metrics.modulePort = 0;
    const [configured] = configureModule([watcher as KubernetesObject], values) as V1Deployment[];
    const container = configured!.spec!.template.spec!.containers[0]!;
    assert.equal(container.ports, undefined);
    assert.equal(container.env?.find(e => e.name === "BULWARK_METRICS_PORT")?.value, "0");
  });

  it("tells the Pepr controllers the init image; their own image stays Pepr's", () => {
    const values = defaultValues(IMAGE);
    const objects = [peprDeployment("pepr-bulwark"), peprDeployment("pepr-bulwark-watcher")];
    const configured = configureModule(objects, values) as V1Deployment[];
    for (const deployment of configured) {
      const container = deployment.spec?.template.spec?.containers[0];
      assert.equal(container?.image, "ghcr.io/defenseunicorns/pepr/controller:v1.1.4");
      const env = Object.fromEntries((container?.env ?? []).map(e => [e.name, e.value]));
      assert.equal(env.LOG_LEVEL, "info", "Pepr's own env is kept");
      assert.equal(env.BULWARK_INIT_IMAGE, IMAGE, "a stale value is replaced");
      assert.equal(container?.env?.filter(e => e.name === "BULWARK_INIT_IMAGE").length, 1);
      // What the capability makes of that environment.
      const settings = podPermissionSettings(env as NodeJS.ProcessEnv);
      assert.equal(settings.inject.image, IMAGE);
      assert.equal(
        settings.inject.serverUrl,
        "https://bulwark-permission-server.bulwark-system.svc:8443",
      );
      // HTTPS by default: the module reads the serving Secret's ca.crt to inject and to trust.
      assert.equal(
        env.BULWARK_PERMISSION_CA_SECRET,
        "bulwark-system/bulwark-permission-server-tls",
      );
      assert.equal(settings.ca.configured, true);
      assert.equal(settings.inject.audience, "bulwark-permission-server");
      assert.equal(settings.inject.ownNamespace, "bulwark-system");
    }
    const original = objects[0] as V1Deployment;
    assert.equal(original.spec?.template.spec?.containers[0]?.env?.length, 2, "input unchanged");
  });

  it("gives Pepr's generated chart the same settings", () => {
    const chart = {
      admission: { env: [{ name: "PEPR_PRETTY_LOG", value: "false" }] },
      watcher: { env: [] },
      uuid: "bulwark",
    };
    const configured = configuredChartValues(chart, defaultValues(IMAGE));
    for (const controller of [configured.admission, configured.watcher]) {
      const image = controller?.env?.find(e => e.name === "BULWARK_INIT_IMAGE")?.value;
      assert.equal(image, IMAGE);
    }
    assert.equal(configured.admission?.env?.[0]?.name, "PEPR_PRETTY_LOG");
    assert.equal(configured.uuid, "bulwark");
  });
});

describe("Pepr's generated chart", () => {
  it("gets its unquoted description quoted (Pepr 1.1.4 writes invalid YAML for a colon)", () => {
    const broken =
      "apiVersion: v2\nname: bulwark\ndescription: Keeps a cluster safe: ingress, pods\nversion: 0.0.1\n";
    const repaired = repairChartYaml(broken);
    assert.deepEqual(load(repaired), {
      apiVersion: "v2",
      name: "bulwark",
      description: "Keeps a cluster safe: ingress, pods",
      version: "0.0.1",
    });
    const fine = "apiVersion: v2\ndescription: plain words\n";
    assert.equal(repairChartYaml(fine), fine);
  });

  it("is named bulwark-module and versioned as the package, not bulwark 1.16.0", () => {
    const pepr = [
      "apiVersion: v2",
      "name: bulwark",
      "description: Keeps a cluster safe: ingress, pods",
      "# This is the chart version.",
      "version: 0.1.0",
      "# It is recommended to use it with quotes.",
      'appVersion: "1.16.0"',
      "",
    ].join("\n");
    const chart = load(moduleChartYaml(pepr, "2.3.4")) as Record<string, unknown>;
    assert.deepEqual(chart, {
      apiVersion: "v2",
      name: "bulwark-module",
      description: "Keeps a cluster safe: ingress, pods",
      version: "2.3.4",
      appVersion: "2.3.4",
    });
    assert.match(moduleChartYaml(pepr), /# This is the chart version\./, "comments stay");
    const current = load(moduleChartYaml(pepr)) as Record<string, unknown>;
    assert.equal(current.version, packageJson.version);
    assert.equal(current.appVersion, packageJson.version);
    const bare = load(moduleChartYaml("apiVersion: v2\nname: bulwark\n", "1.0.0"));
    assert.deepEqual(bare, {
      apiVersion: "v2",
      name: "bulwark-module",
      version: "1.0.0",
      appVersion: "1.0.0",
    });
  });

  it("lets a parent chart's global values through its closed values schema", () => {
    const pepr = {
      $ref: "#/definitions/Values",
      definitions: {
        Values: {
          additionalProperties: false,
          properties: { imagePullSecrets: { type: "array" } },
        },
      },
    };
    const schema = moduleChartSchema(pepr);
    assert.deepEqual(Object.keys(schema.definitions?.Values?.properties ?? {}), [
      "imagePullSecrets",
      "global",
    ]);
    assert.equal(pepr.definitions.Values.properties.imagePullSecrets.type, "array", "a copy");
  });
});

describe("Pepr's generated chart: webhooks", () => {
  const config = (kind: string, rules: object[]): KubernetesObject =>
    ({
      apiVersion: "admissionregistration.k8s.io/v1",
      kind,
      metadata: { name: "pepr-bulwark" },
      webhooks: [{ name: "pepr-bulwark.pepr.dev", failurePolicy: "Fail", rules }],
    }) as KubernetesObject;

  it("become the build's own configurations, scoped per resource, node rules failing open", () => {
    const templates = webhookTemplates([
      config("MutatingWebhookConfiguration", [
        { resources: ["pods"], operations: ["CREATE"] },
        { resources: ["nodes"], operations: ["UPDATE"] },
      ]),
      config("ValidatingWebhookConfiguration", [{ resources: ["ingresses"] }]),
      { apiVersion: "v1", kind: "Secret", metadata: { name: "pepr-bulwark-tls" } },
    ]);
    assert.deepEqual(Object.keys(templates).sort(), [
      "admission-policies.yaml",
      "mutation-webhook.yaml",
      "validation-webhook.yaml",
    ]);
    // The pod mutation's refusals are the API server's to make: the policy ships with the webhooks.
    const policies = loadAll(templates["admission-policies.yaml"] ?? "") as KubernetesObject[];
    assert.deepEqual(
      policies.map(p => [p.kind, p.metadata?.name]),
      [
        ["ValidatingAdmissionPolicy", "pepr-bulwark-pod-permission-request"],
        ["ValidatingAdmissionPolicyBinding", "pepr-bulwark-pod-permission-request"],
      ],
    );
    const mutating = load(templates["mutation-webhook.yaml"] ?? "") as {
      webhooks: { name: string; failurePolicy: string }[];
    };
    assert.deepEqual(
      mutating.webhooks.map(w => [w.name, w.failurePolicy]),
      [
        ["pepr-bulwark-pods.pepr.dev", "Fail"],
        ["pepr-bulwark-fail-open.pepr.dev", "Ignore"],
      ],
    );
  });

  it("refuse text Helm would read as a template", () => {
    const odd = config("ValidatingWebhookConfiguration", [{ resources: ["{{ .Values.x }}"] }]);
    assert.throws(() => webhookTemplates([odd]), /Helm would template/);
  });
});

describe("uninstall plan", () => {
  it("runs finalizers, webhooks, finalizers again, the rest, CRDs last", () => {
    assert.deepEqual(
      PHASES.map(p => p.name),
      ["finalizers", "webhooks", "finalizers-again", "resources", "crds"],
    );
  });

  it("knows every CRD in crds/", () => {
    const names = readdirSync(join(ROOT, "crds"))
      .filter(f => f.endsWith(".yaml"))
      .flatMap(f => readYamlObjects(join(ROOT, "crds", f)))
      .map(o => o.metadata?.name ?? "");
    assert.deepEqual([...BULWARK_CRDS].sort(), names.sort());
  });

  it("finds the pods holding the finalizer", () => {
    const pod = (namespace: string, name: string, finalizers?: string[]): V1Pod => ({
      metadata: { namespace, name, finalizers },
    });
    const pods = [
      pod("b", "x", ["stke.io/podpermission-protection"]),
      pod("a", "y", ["other.example/keep", "stke.io/podpermission-protection"]),
      pod("a", "z", ["other.example/keep"]),
      pod("a", "w"),
    ];
    assert.deepEqual(
      podsWithFinalizer(pods, "stke.io/podpermission-protection").map(
        r => `${r.namespace}/${r.name}`,
      ),
      ["a/y", "b/x"],
    );
  });

  it("treats pepr-<uuid> and pepr-<uuid>-… as the module's, nothing else", () => {
    assert.ok(isModuleObject("pepr-bulwark", "pepr-bulwark"));
    assert.ok(isModuleObject("pepr-bulwark-watcher", "pepr-bulwark"));
    assert.ok(!isModuleObject("pepr-bulwarkish", "pepr-bulwark"));
    assert.ok(!isModuleObject("pepr-other", "pepr-bulwark"));
    assert.ok(!isModuleObject(undefined, "pepr-bulwark"));
  });
});
