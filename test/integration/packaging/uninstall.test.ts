// `bulwark uninstall` against the real API server.
//
// The control plane is shared by every integration test of the run, and the real install's
// webhooks, Pepr module and CRDs must outlive this file. So the destructive run acts on an
// install of its own: the same code, with an Installation whose names, label and CRD are this
// test's (its pods in its own namespace, webhooks that match nothing, a CRD of its own). The real
// install is only ever looked at: `bulwark uninstall --dry-run`, run as a user runs it (the bin, on
// KUBECONFIG), must list it and change nothing.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { promisify } from "node:util";
import {
  AdmissionregistrationV1Api,
  ApiextensionsV1Api,
  PatchStrategy,
  setHeaderOptions,
  type KubernetesObject,
  type V1Pod,
} from "@kubernetes/client-node";
import { ROOT } from "../../../packaging/build";
import { applyOrThrow } from "../../../hack/control-plane/kube";
import { waitUntil } from "../../harness/wait";
import { uninstall, type Installation, type PhaseName } from "../../../cli/uninstall";
import { progressOn } from "../../../cli/progress";
import { POD_PERMISSION_FINALIZER } from "../../../core/names";
import { denyingPolicy } from "../../../core/admission-policy";
import { testCluster, testNamespace } from "../../harness/cluster";

const run = promisify(execFile);
const cluster = testCluster();
const admission = cluster.kc.makeApiClient(AdmissionregistrationV1Api);
const extensions = cluster.kc.makeApiClient(ApiextensionsV1Api);

const id = randomBytes(3).toString("hex");
const LABEL = `bulwark.dev/uninstall-test`;
const GROUP = `uninstall-${id}.bulwark.dev`;
const CRD = `widgets.${GROUP}`;
const PEPR = `pepr-uninstall-${id}`;
const KEEP_FINALIZER = "example.com/keep";

function pod(name: string, finalizers: string[]): KubernetesObject & V1Pod {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, finalizers },
    spec: { containers: [{ name: "app", image: "registry.example.com/app:1" }] },
  } as KubernetesObject & V1Pod;
}

/** A webhook that can never be called: it matches only this test's own CRD group. */
function webhookConfig(
  kind: "Mutating" | "Validating",
  name: string,
  labels: Record<string, string>,
) {
  return {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: `${kind}WebhookConfiguration`,
    metadata: { name, labels },
    webhooks: [
      {
        name: `${name}.bulwark.dev`,
        admissionReviewVersions: ["v1"],
        sideEffects: "None",
        failurePolicy: "Ignore",
        clientConfig: { url: "https://127.0.0.1:9/never" },
        rules: [
          {
            apiGroups: [GROUP],
            apiVersions: ["v1"],
            operations: ["CREATE"],
            resources: ["widgets"],
          },
        ],
      },
    ],
  };
}

/** A policy spec that can never refuse anything: it matches only this test's own CRD group. */
const widgetPolicy = {
  matchConstraints: {
    resourceRules: [
      { apiGroups: [GROUP], apiVersions: ["v1"], operations: ["CREATE"], resources: ["widgets"] },
    ],
  },
  rules: [{ broken: "false", message: "never" }],
  reason: "Invalid",
} as const;

describe("bulwark uninstall", () => {
  let podNs = "";
  let ownNs = "";
  let dropPodNs: () => Promise<void> = async () => {};
  let install: Installation;

  before(async () => {
    [podNs, dropPodNs] = await testNamespace(cluster, "uninstall-pods");
    // Bulwark's own namespace in this install: carries the label, so uninstall deletes it.
    ownNs = `uninstall-own-${id}`;
    install = {
      peprName: PEPR,
      peprNamespace: podNs,
      namespace: ownNs,
      labelSelector: `${LABEL}=${id}`,
      crds: [CRD],
      finalizer: POD_PERMISSION_FINALIZER,
      podNamespaces: [podNs],
    };
    const labels = { [LABEL]: id };
    const inPodNs = (o: object) => ({
      ...o,
      metadata: { ...(o as KubernetesObject).metadata, namespace: podNs },
    });
    const objects: object[] = [
      { apiVersion: "v1", kind: "Namespace", metadata: { name: ownNs, labels } },
      {
        apiVersion: "apiextensions.k8s.io/v1",
        kind: "CustomResourceDefinition",
        metadata: { name: CRD },
        spec: {
          group: GROUP,
          scope: "Namespaced",
          names: { plural: "widgets", singular: "widget", kind: "Widget" },
          versions: [
            {
              name: "v1",
              served: true,
              storage: true,
              schema: {
                openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
              },
            },
          ],
        },
      },
      webhookConfig("Mutating", PEPR, {}),
      webhookConfig("Validating", `uninstall-${id}-labelled`, labels),
      // Same prefix without the dash: not the module's, stays.
      webhookConfig("Validating", `${PEPR}x`, {}),
      // The module's admission policy (by name), a workload's (by label): both matching nothing.
      ...denyingPolicy(`${PEPR}-pod-permission-request`, widgetPolicy),
      ...denyingPolicy(`uninstall-${id}-metadata`, widgetPolicy).map(o => ({
        ...o,
        metadata: { ...o.metadata, labels },
      })),
      {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "ClusterRole",
        metadata: { name: PEPR },
        rules: [{ apiGroups: [GROUP], resources: ["widgets"], verbs: ["get"] }],
      },
      {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "ClusterRole",
        metadata: { name: `uninstall-${id}-gateway`, labels },
        rules: [{ apiGroups: [GROUP], resources: ["widgets"], verbs: ["list"] }],
      },
      inPodNs({
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: `${PEPR}-tls` },
        stringData: { a: "b" },
      }),
      inPodNs({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "unrelated" },
        data: { a: "b" },
      }),
      {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "state", namespace: ownNs, labels },
        data: {},
      },
      inPodNs(pod("held-1", [POD_PERMISSION_FINALIZER])),
      inPodNs(pod("held-2", [KEEP_FINALIZER, POD_PERMISSION_FINALIZER])),
      inPodNs(pod("free", [])),
    ];
    await applyOrThrow(cluster.kc, objects as KubernetesObject[]);
  });

  after(async () => {
    // held-2 keeps someone else's finalizer by design; let its namespace go.
    await cluster.core
      .patchNamespacedPod(
        {
          name: "held-2",
          namespace: podNs,
          body: [{ op: "remove", path: "/metadata/finalizers" }],
        },
        setHeaderOptions("Content-Type", PatchStrategy.JsonPatch),
      )
      .catch(() => undefined);
    await dropPodNs();
  });

  const finalizersOf = async (name: string) =>
    (await cluster.core.readNamespacedPod({ name, namespace: podNs })).metadata?.finalizers ?? [];

  it("--dry-run lists every phase's objects in order and changes nothing", async () => {
    const lines: string[] = [];
    const summary = await uninstall(
      cluster.kc,
      install,
      { dryRun: true, keepCrds: false },
      l => void lines.push(l),
    );
    const found = Object.fromEntries(
      summary.phases.map(p => [
        p.name,
        p.actions.map(a => `${a.ref.kind} ${a.ref.namespace ?? ""}/${a.ref.name}`),
      ]),
    ) as Record<PhaseName, string[]>;
    assert.deepEqual(Object.keys(found), [
      "finalizers",
      "webhooks",
      "finalizers-again",
      "resources",
      "crds",
    ]);
    assert.deepEqual(found.finalizers, [`Pod ${podNs}/held-1`, `Pod ${podNs}/held-2`]);
    assert.deepEqual(found.webhooks.sort(), [
      `MutatingWebhookConfiguration /${PEPR}`,
      `ValidatingAdmissionPolicy /${PEPR}-pod-permission-request`,
      `ValidatingAdmissionPolicy /uninstall-${id}-metadata`,
      `ValidatingAdmissionPolicyBinding /${PEPR}-pod-permission-request`,
      `ValidatingAdmissionPolicyBinding /uninstall-${id}-metadata`,
      `ValidatingWebhookConfiguration /uninstall-${id}-labelled`,
    ]);
    assert.deepEqual(found.resources.sort(), [
      `ClusterRole /${PEPR}`,
      `ClusterRole /uninstall-${id}-gateway`,
      `ConfigMap ${ownNs}/state`,
      `Namespace /${ownNs}`,
      `Secret ${podNs}/${PEPR}-tls`,
    ]);
    assert.deepEqual(found.crds, [`CustomResourceDefinition /${CRD}`]);
    assert.ok(
      lines.some(l =>
        l.includes(`would remove ${POD_PERMISSION_FINALIZER} from Pod ${podNs}/held-1`),
      ),
    );
    // Nothing changed.
    assert.deepEqual(await finalizersOf("held-1"), [POD_PERMISSION_FINALIZER]);
    await admission.readMutatingWebhookConfiguration({ name: PEPR });
    await extensions.readCustomResourceDefinition({ name: CRD });
  });

  it("strips the finalizer first, then removes webhooks, the rest, and the CRD last", async () => {
    const lines: string[] = [];
    const ERASE = "\r\x1b[2K";
    const terminal: string[] = [];
    const progress = progressOn({ isTTY: true, write: s => (terminal.push(String(s)), true) });
    await uninstall(
      cluster.kc,
      install,
      { dryRun: false, keepCrds: false, progress },
      l => void lines.push(l),
    );
    // On a terminal, each phase's count rewritten in place, erased at the end.
    assert.equal(terminal[0], `${ERASE}[1/5] strip the pod-permission finalizer from pods: 1/2…`);
    assert.equal(terminal.at(-1), ERASE);
    for (const line of terminal) {
      assert.ok(line.startsWith(ERASE), JSON.stringify(line));
      assert.match(line.slice(ERASE.length), /^(\[\d\/5\] .*: \d+\/\d+…)?$/);
    }
    const phaseLines = lines.filter(l => /^\[\d\/\d\]/.test(l));
    assert.equal(phaseLines.length, 5);
    assert.match(
      phaseLines[0] ?? "",
      /^\[1\/5\] strip the pod-permission finalizer from pods: 2 object/,
    );
    assert.match(
      phaseLines[1] ?? "",
      /^\[2\/5\] delete the webhook configurations and admission policies: 6 object/,
    );
    assert.match(phaseLines[2] ?? "", /^\[3\/5\] .*: 0 object/);
    assert.match(phaseLines[4] ?? "", /^\[5\/5\] delete the CustomResourceDefinitions: 1 object/);

    assert.deepEqual(await finalizersOf("held-1"), []);
    assert.deepEqual(
      await finalizersOf("held-2"),
      [KEEP_FINALIZER],
      "someone else's finalizer stays",
    );
    // A pod without our finalizer goes at once when deleted: nothing is left Terminating.
    await cluster.core.deleteNamespacedPod({
      name: "held-1",
      namespace: podNs,
      gracePeriodSeconds: 0,
    });
    await waitUntil("held-1 to be gone", async () => {
      const pods = await cluster.core.listNamespacedPod({ namespace: podNs });
      return !pods.items.some(p => p.metadata?.name === "held-1");
    });

    const webhooks = (await admission.listMutatingWebhookConfiguration()).items.map(
      w => w.metadata?.name,
    );
    assert.ok(!webhooks.includes(PEPR));
    const validating = (await admission.listValidatingWebhookConfiguration()).items.map(
      w => w.metadata?.name,
    );
    assert.ok(!validating.includes(`uninstall-${id}-labelled`));
    assert.ok(validating.includes(`${PEPR}x`), "a look-alike name is not the module's");
    const policies = (await admission.listValidatingAdmissionPolicy()).items.map(
      p => p.metadata?.name ?? "",
    );
    assert.deepEqual(
      policies.filter(name => name.includes(id)),
      [],
      "the module's and the labelled admission policies are gone",
    );
    await admission.deleteValidatingWebhookConfiguration({ name: `${PEPR}x` });

    const secrets = (await cluster.core.listNamespacedSecret({ namespace: podNs })).items.map(
      s => s.metadata?.name,
    );
    assert.ok(!secrets.includes(`${PEPR}-tls`));
    const configMaps = (await cluster.core.listNamespacedConfigMap({ namespace: podNs })).items.map(
      c => c.metadata?.name,
    );
    assert.ok(configMaps.includes("unrelated"), "unlabelled objects stay");
    const own = await cluster.core.readNamespace({ name: ownNs }).catch(() => undefined);
    assert.ok(own === undefined || own.metadata?.deletionTimestamp, "its namespace is deleted");
    await waitUntil("the CRD to be gone", async () => {
      const crds = await extensions.listCustomResourceDefinition();
      return !crds.items.some(c => c.metadata?.name === CRD);
    });
  });

  it("as a user runs it: `bulwark uninstall --dry-run` lists the real install and changes nothing", async () => {
    const bin = join(ROOT, "bin", "bulwark.js");
    const env = { ...process.env, KUBECONFIG: cluster.kubeconfigPath };
    const { stdout } = await run(process.execPath, [bin, "uninstall", "--dry-run"], {
      env,
      cwd: ROOT,
    });
    const before = (await admission.listMutatingWebhookConfiguration()).items.map(
      w => w.metadata?.name,
    );
    assert.match(stdout, /^dry run: nothing is changed$/m);
    assert.match(stdout, /^\[1\/5\] strip the pod-permission finalizer from pods: \d+ object/m);
    assert.match(stdout, /^\[5\/5\] delete the CustomResourceDefinitions: 5 object/m);
    for (const crd of ["ingresschecksums.tengine.taobao.org", "permissiongroups.bulwark.dev"]) {
      assert.match(
        stdout,
        new RegExp(`would delete CustomResourceDefinition ${crd.replaceAll(".", "\\.")}`),
      );
    }
    assert.ok(
      stdout.includes("ValidatingAdmissionPolicy pepr-bulwark-pod-permission-request"),
      `lists the module's admission policy:\n${stdout}`,
    );
    for (const name of cluster.webhookNames) {
      assert.ok(
        stdout.includes(`WebhookConfiguration ${name}`),
        `lists webhook ${name}:\n${stdout}`,
      );
    }
    const kept = await run(process.execPath, [bin, "uninstall", "--dry-run", "--keep-crds"], {
      env,
      cwd: ROOT,
    });
    assert.match(kept.stdout, /^\[4\/4\] delete the module, the workloads and their RBAC/m);
    assert.match(kept.stdout, /^kept: ingresschecksums\.tengine\.taobao\.org/m);
    const afterRun = (await admission.listMutatingWebhookConfiguration()).items.map(
      w => w.metadata?.name,
    );
    assert.deepEqual(afterRun, before);
    await extensions.readCustomResourceDefinition({ name: "permissiongroups.bulwark.dev" });
  });
});
