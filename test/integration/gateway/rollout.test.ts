// Batched rollout across two gateway processes, bulwark-gateway-0 and -1: with index-id 1 only
// ordinal 0 applies an update; ordinal 1 keeps its current revision, also across a restart; a
// rolled-out delete (the object kept terminating by a finalizer) waits for the index too.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { NetworkingV1Api } from "@kubernetes/client-node";
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
} from "./harness";

const cluster = testCluster();
const P = "nginx.ingress.kubernetes.io/";
const HOST = "rolling.example.com";
const FINALIZER = "rollout.example.com/hold";

function rollout(index: string): Record<string, string> {
  return {
    [`${P}ingress-rollout`]: "true",
    [`${P}ingress-rollout-current-revision`]: "blue",
    [`${P}ingress-rollout-update-revision`]: "green",
    [`${P}ingress-rollout-index-id`]: index,
  };
}

describe("gateway batched rollout", () => {
  let ns: string;
  let removeNamespace: () => Promise<void>;
  let blue: Backend;
  let green: Backend;
  let zero: RunningGateway;
  let one: RunningGateway;
  const start = (podName: string, stateDir?: string): Promise<RunningGateway> =>
    startGateway({ kubeconfigPath: cluster.kubeconfigPath, namespace: ns, podName, stateDir });

  before(async () => {
    [ns, removeNamespace] = await testNamespace(cluster, "gw-rollout");
    await ensureIngressClass(cluster.kc);
    [blue, green] = [await startBackend("blue"), await startBackend("green")];
    await applyOrThrow(cluster.kc, [
      endpointSlice(ns, "blue", blue.port),
      endpointSlice(ns, "green", green.port),
      ingress(ns, "rolling-1", { host: HOST, service: "blue" }),
    ]);
    [zero, one] = [await start("bulwark-gateway-0"), await start("bulwark-gateway-1")];
    await waitServed(zero.httpPort, HOST, "blue");
    await waitServed(one.httpPort, HOST, "blue");
  });

  after(async () => {
    await Promise.all([zero?.stop(), one?.stop()]);
    await Promise.all([blue?.close(), green?.close()]);
    await removeNamespace?.();
  });

  it("index-id 1 reaches ordinal 0 only; ordinal 1 keeps its revision across a restart", async () => {
    await applyOrThrow(cluster.kc, [
      ingress(ns, "rolling-1", { host: HOST, service: "green", annotations: rollout("1") }),
    ]);
    await waitServed(zero.httpPort, HOST, "green");
    await waitUntil("ordinal 1 to hold the update", async () => {
      return (await one.health()).rollout.held.ingress[`${ns}/rolling-1`] !== undefined;
    });
    assert.equal((await get(one.httpPort, HOST)).body, "blue /");

    await one.stop();
    one = await start("bulwark-gateway-1", one.stateDir);
    await waitUntil(
      "the restarted ordinal 1 to sync",
      async () => (await one.health()).view?.from === "api",
    );
    assert.equal(
      (await get(one.httpPort, HOST)).body,
      "blue /",
      "the current revision survives a restart",
    );
    assert.equal((await get(zero.httpPort, HOST)).body, "green /");
  });

  it("a new object created with index-id 1 is served on ordinal 0 only", async () => {
    await applyOrThrow(cluster.kc, [
      ingress(ns, "fresh-2", {
        host: "fresh.example.com",
        service: "green",
        annotations: rollout("1"),
      }),
    ]);
    await waitServed(zero.httpPort, "fresh.example.com", "green");
    await waitUntil("ordinal 1 to hold the new object", async () => {
      return (await one.health()).rollout.held.ingress[`${ns}/fresh-2`] !== undefined;
    });
    assert.equal((await get(one.httpPort, "fresh.example.com")).status, 404);
  });

  it("index-id -1 (done) reaches every ordinal", async () => {
    await applyOrThrow(cluster.kc, [
      ingress(ns, "rolling-1", { host: HOST, service: "green", annotations: rollout("-1") }),
      ingress(ns, "fresh-2", {
        host: "fresh.example.com",
        service: "green",
        annotations: rollout("-1"),
      }),
    ]);
    await waitServed(one.httpPort, HOST, "green");
    await waitServed(one.httpPort, "fresh.example.com", "green");
  });

  it("a rolled-out delete waits for the index like an update", async () => {
    const api = cluster.kc.makeApiClient(NetworkingV1Api);
    const held = ingress(ns, "rolling-1", {
      host: HOST,
      service: "green",
      annotations: rollout("1"),
    });
    (held.metadata as { finalizers?: string[] }).finalizers = [FINALIZER];
    await applyOrThrow(cluster.kc, [held]);
    await api.deleteNamespacedIngress({ name: "rolling-1", namespace: ns });
    await waitUntil(
      "ordinal 0 to apply the delete",
      async () => (await get(zero.httpPort, HOST)).status === 404,
    );
    await waitUntil("ordinal 1 to hold the delete", async () => {
      return (await one.health()).rollout.held.ingress[`${ns}/rolling-1`] !== undefined;
    });
    assert.equal((await get(one.httpPort, HOST)).body, "green /");
    await api.patchNamespacedIngress({
      name: "rolling-1",
      namespace: ns,
      body: [{ op: "remove", path: "/metadata/finalizers" }],
    });
    await waitUntil("the delete to reach ordinal 1 once the object is gone", async () => {
      return (await get(one.httpPort, HOST)).status === 404;
    });
  });
});
