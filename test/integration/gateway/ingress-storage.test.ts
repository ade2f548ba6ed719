// Tengine-Ingress's ingress storage cluster, with two real API servers: the gateway reads
// Ingresses, TLS Secrets and IngressClasses from a second API server of this test's own
// (BULWARK_INGRESS_KUBECONFIG) and Services and EndpointSlices from the shared one. That storage
// has no Bulwark webhook, so the gateway's own review is all that stands between it and traffic.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CoreV1Api, type KubeConfig } from "@kubernetes/client-node";
import { startControlPlane, type ControlPlane } from "../../../hack/control-plane/control-plane";
import { applyOrThrow, loadKubeConfig } from "../../../hack/control-plane/kube";
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
} from "./harness";

const cluster = testCluster();
const P = "nginx.ingress.kubernetes.io/";

describe("gateway with a separate ingress storage API server", () => {
  let storage: ControlPlane;
  let storageKc: KubeConfig;
  let ns: string;
  let removeNamespace: () => Promise<void>;
  let web: Backend;
  let gateway: RunningGateway;
  const dir = mkdtempSync(join(tmpdir(), "gw-ingress-storage-"));

  before(async () => {
    storage = await startControlPlane({ dir: join(dir, "storage"), binDir: cluster.binDir });
    storageKc = loadKubeConfig(storage.kubeconfigPath);
    // The same namespace on both sides: an Ingress routes to Services of its own namespace.
    [ns, removeNamespace] = await testNamespace(cluster, "gw-storage");
    await storageKc.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: ns } } });
    await ensureIngressClass(storageKc);
    web = await startBackend("web");
    await applyOrThrow(cluster.kc, [
      endpointSlice(ns, "web", web.port),
      // In the workload cluster: not where this gateway reads Ingresses.
      ingress(ns, "workload-side", { host: "workload-side.example.com", service: "web" }),
    ]);
    await applyOrThrow(storageKc, [
      ingress(ns, "stored", { host: "stored.example.com", service: "web" }),
      ingress(ns, "walled", {
        host: "walled.example.com",
        service: "web",
        annotations: { [`${P}auth-tls-secret`]: "default/client-ca" },
      }),
    ]);
    gateway = await startGateway({
      kubeconfigPath: cluster.kubeconfigPath,
      namespace: ns,
      env: { BULWARK_INGRESS_KUBECONFIG: storage.kubeconfigPath },
    });
  });

  after(async () => {
    await gateway?.stop();
    await web?.close();
    await removeNamespace?.();
    await storage?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("routes an Ingress of the storage to endpoints of the workload cluster", async () => {
    assert.equal((await waitServed(gateway.httpPort, "stored.example.com", "web")).body, "web /");
  });

  it("does not read Ingresses from the workload cluster", async () => {
    assert.equal((await get(gateway.httpPort, "workload-side.example.com")).status, 404);
  });

  it("reviews what the storage holds, with no webhook there: a security control answers 503", async () => {
    const reply = await get(gateway.httpPort, "walled.example.com");
    assert.equal(reply.status, 503);
  });

  it("follows changes in the storage", async () => {
    await applyOrThrow(storageKc, [
      ingress(ns, "later", { host: "later.example.com", service: "web" }),
    ]);
    await waitServed(gateway.httpPort, "later.example.com", "web");
    await waitUntil("the gateway to count three Ingresses", async () => {
      return (await gateway.health()).view?.ingresses === 3;
    });
  });
});
