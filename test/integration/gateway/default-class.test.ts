// The default IngressClass against the real API server: while `bulwark` carries
// ingressclass.kubernetes.io/is-default-class: "true", Ingresses that name no class are served
// too; the legacy kubernetes.io/ingress.class annotation names a class either way.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { KubernetesObject } from "@kubernetes/client-node";
import { applyOrThrow } from "../../../hack/control-plane/kube";
import { waitUntil } from "../../harness/wait";
import { testCluster, testNamespace } from "../../harness/cluster";
import {
  endpointSlice,
  ensureIngressClass,
  get,
  ingress,
  startBackend,
  startGateway,
  waitServed,
  type Backend,
  type RunningGateway,
  defaultIngressClass,
} from "./harness";

const cluster = testCluster();

/** An Ingress to `blue` with no spec.ingressClassName, and the legacy annotation if given. */
function unnamed(namespace: string, name: string, legacyClass?: string): KubernetesObject {
  const object = ingress(namespace, name, {
    host: `${name}.example.com`,
    service: "blue",
    annotations: legacyClass ? { "kubernetes.io/ingress.class": legacyClass } : {},
  }) as KubernetesObject & { spec: { ingressClassName?: string } };
  delete object.spec.ingressClassName;
  return object;
}

describe("gateway default IngressClass", () => {
  let ns: string;
  let removeNamespace: () => Promise<void>;
  let blue: Backend;
  let gateway: RunningGateway;

  before(async () => {
    [ns, removeNamespace] = await testNamespace(cluster, "gw-default-class");
    await ensureIngressClass(cluster.kc);
    await applyOrThrow(cluster.kc, [defaultIngressClass(false)]);
    blue = await startBackend("blue");
    // Created while bulwark is not the default, so the API server leaves their class unset.
    await applyOrThrow(cluster.kc, [
      endpointSlice(ns, "blue", blue.port),
      unnamed(ns, "plain-1"),
      unnamed(ns, "legacy-2", "bulwark"),
      unnamed(ns, "elsewhere-3", "nginx"),
    ]);
    gateway = await startGateway({ kubeconfigPath: cluster.kubeconfigPath, namespace: ns });
  });

  after(async () => {
    // Other tests in this run share the cluster-scoped class: leave it not the default.
    await applyOrThrow(cluster.kc, [defaultIngressClass(false)]);
    await gateway?.stop();
    await blue?.close();
    await removeNamespace?.();
  });

  it("serves the legacy annotation naming bulwark, not an Ingress naming no class", async () => {
    await waitServed(gateway.httpPort, "legacy-2.example.com", "blue");
    assert.equal((await get(gateway.httpPort, "plain-1.example.com")).status, 404);
    assert.equal((await get(gateway.httpPort, "elsewhere-3.example.com")).status, 404);
  });

  it("serves Ingresses naming no class while bulwark is the default, and stops after", async () => {
    await applyOrThrow(cluster.kc, [defaultIngressClass(true)]);
    assert.equal(
      (await waitServed(gateway.httpPort, "plain-1.example.com", "blue")).body,
      "blue /",
    );
    // The legacy annotation naming another class still wins over the default.
    assert.equal((await get(gateway.httpPort, "elsewhere-3.example.com")).status, 404);
    assert.equal((await gateway.health()).view?.ingresses, 2);
    await applyOrThrow(cluster.kc, [defaultIngressClass(false)]);
    await waitUntil("plain-1 to be dropped", async () => {
      const reply = await get(gateway.httpPort, "plain-1.example.com");
      return reply.status === 404;
    });
    assert.equal((await get(gateway.httpPort, "legacy-2.example.com")).body, "blue /");
  });
});
