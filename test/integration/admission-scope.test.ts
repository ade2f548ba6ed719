// What a Bulwark admission outage costs the cluster. Copies of the module's webhook
// configurations (as packaging/webhook-policy.ts scopes them) pointed at an address where nothing
// listens stand for Bulwark's admission being down; the real ones keep running beside them, so
// whatever the copies let through is what an outage lets through.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  AdmissionregistrationV1Api,
  NetworkingV1Api,
  type KubernetesObject,
  type V1MutatingWebhookConfiguration,
  type V1ValidatingWebhookConfiguration,
} from "@kubernetes/client-node";
import { applyOrThrow } from "../../hack/control-plane/kube";
import { waitUntil } from "../harness/wait";
import { makeCertificate, tlsSecret } from "../fixtures/certificates";
import { testCluster, testNamespace } from "../harness/cluster";

const cluster = testCluster();
const DEAD_URL = "https://127.0.0.1:1/down";
/** The namespace the harness's module is built for (packaging/webhook-policy.ts's default). */
const OWN_NAMESPACE = "bulwark-system";

type Configuration = V1MutatingWebhookConfiguration | V1ValidatingWebhookConfiguration;

/** The module's configurations, renamed, every webhook calling DEAD_URL. */
async function deadCopies(): Promise<KubernetesObject[]> {
  const admission = cluster.kc.makeApiClient(AdmissionregistrationV1Api);
  const copies: KubernetesObject[] = [];
  for (const name of new Set(cluster.webhookNames)) {
    const found: [string, Configuration][] = [];
    await admission
      .readMutatingWebhookConfiguration({ name })
      .then(c => found.push(["MutatingWebhookConfiguration", c]))
      .catch(() => {});
    await admission
      .readValidatingWebhookConfiguration({ name })
      .then(c => found.push(["ValidatingWebhookConfiguration", c]))
      .catch(() => {});
    for (const [kind, config] of found) {
      copies.push({
        apiVersion: "admissionregistration.k8s.io/v1",
        kind,
        metadata: { name: `${name}-down` },
        webhooks: (config.webhooks ?? []).map(w => ({
          ...w,
          clientConfig: { url: DEAD_URL, caBundle: w.clientConfig.caBundle },
          timeoutSeconds: 2,
        })),
      } as KubernetesObject);
    }
  }
  return copies;
}

const annotatedPod = (name: string) => ({
  metadata: { name, annotations: { "permission.bulwark.dev/group": "any-group" } },
  spec: { containers: [{ name: "app", image: "registry.example/app:1" }] },
});

const ingress = (name: string, className: string) => ({
  metadata: { name },
  spec: {
    ingressClassName: className,
    rules: [{ host: `${name}.example.com` }],
  },
});

describe("admission scope: with Bulwark's admission down", () => {
  it("plain pods, Secrets, TLS Secrets, other classes' Ingresses and annotated pods in Bulwark's namespace are written; annotated pods and Bulwark's Ingresses are not", async () => {
    const [ns, drop] = await testNamespace(cluster, "adm-scope");
    const copies = await deadCopies();
    assert.ok(copies.length >= 2, "the module registers mutating and validating webhooks");
    const admission = cluster.kc.makeApiClient(AdmissionregistrationV1Api);
    const networking = cluster.kc.makeApiClient(NetworkingV1Api);
    try {
      await applyOrThrow(cluster.kc, copies);
      const refusal = await waitUntil("the down copies to be called", async () => {
        const error = await cluster.core
          .createNamespacedPod({ namespace: ns, body: annotatedPod("annotated") })
          .then(() => undefined)
          .catch((e: unknown) => String((e as { body?: string }).body ?? e));
        return error?.includes("failed calling webhook") ? error : undefined;
      });
      assert.match(refusal, /pepr-bulwark-pods/, "the pods webhook fails closed");

      await cluster.core.createNamespacedPod({
        namespace: ns,
        body: { metadata: { name: "plain" }, spec: annotatedPod("x").spec },
      });
      // Bulwark's own workloads never wait on its admission, annotated or not.
      const own = `own-${Date.now()}`;
      await cluster.core.createNamespacedPod({ namespace: OWN_NAMESPACE, body: annotatedPod(own) });
      await cluster.core.deleteNamespacedPod({
        namespace: OWN_NAMESPACE,
        name: own,
        gracePeriodSeconds: 0,
      });
      await cluster.core.createNamespacedSecret({
        namespace: ns,
        body: { metadata: { name: "plain" }, stringData: { a: "b" } },
      });
      const cert = makeCertificate({ key: "ecdsa", dnsNames: ["tls.example.com"] });
      await cluster.core.createNamespacedSecret({
        namespace: ns,
        body: tlsSecret(ns, "tls", cert),
      });
      await networking.createNamespacedIngress({ namespace: ns, body: ingress("other", "nginx") });

      const served = await networking
        .createNamespacedIngress({ namespace: ns, body: ingress("served", "bulwark") })
        .then(() => "created")
        .catch((e: unknown) => String((e as { body?: string }).body ?? e));
      assert.match(served, /failed calling webhook .*pepr-bulwark-ingresses\.pepr\.dev/);
    } finally {
      for (const copy of copies) {
        const name = copy.metadata?.name ?? "";
        if (copy.kind === "MutatingWebhookConfiguration")
          await admission.deleteMutatingWebhookConfiguration({ name }).catch(() => {});
        else await admission.deleteValidatingWebhookConfiguration({ name }).catch(() => {});
      }
      // The next tests must not meet the copies: wait until the API server stops calling them.
      await waitUntil("the down copies to be gone", async () => {
        const error = await cluster.core
          .createNamespacedPod({ namespace: ns, body: annotatedPod("after") })
          .then(() => "")
          .catch((e: unknown) => String((e as { body?: string }).body ?? e));
        return !error.includes("failed calling webhook");
      });
      await drop();
    }
  });
});
