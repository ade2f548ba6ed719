import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  KEEPER_MANAGER,
  microTime,
  needsReadyStatus,
  nodeLease,
  nodeObject,
  readyNode,
  readyStatus,
} from "./node-status";

const NODE = { name: "bulwark-edge-1", address: "127.0.0.2", labels: { zone: "demo" } };

describe("what the node keeper writes, as a kubelet", () => {
  it("a Node labelled with its hostname and its own labels", () => {
    assert.deepEqual(nodeObject(NODE).metadata.labels, {
      "kubernetes.io/hostname": "bulwark-edge-1",
      "kubernetes.io/os": "linux",
      zone: "demo",
    });
  });

  it("status Ready with a fresh heartbeat, its InternalIP, room for pods", () => {
    const now = new Date("2026-01-02T03:04:05.678Z");
    const { status } = readyStatus(NODE, now);
    const ready = status.conditions.find(c => c.type === "Ready");
    assert.equal(ready?.status, "True");
    assert.equal(ready?.lastHeartbeatTime, now.toISOString());
    assert.deepEqual(status.addresses[0], { type: "InternalIP", address: "127.0.0.2" });
    assert.equal(status.allocatable.pods, "110");
  });

  it("registers the node with its Ready status in the create itself", () => {
    const now = new Date("2026-01-02T03:04:05.678Z");
    const node = readyNode(NODE, now);
    assert.deepEqual(node.metadata, nodeObject(NODE).metadata);
    const ready = node.status?.conditions?.find(c => c.type === "Ready");
    assert.equal(ready?.status, "True");
    assert.equal(ready?.lastHeartbeatTime?.getTime(), now.getTime());
    assert.equal(node.status?.addresses?.[0]?.address, "127.0.0.2");
  });

  it("posts status again only when Ready is not True (after a cut, or Unknown)", () => {
    const ready = (status: string) => ({ status: { conditions: [{ type: "Ready", status }] } });
    assert.equal(needsReadyStatus(ready("True")), false);
    assert.equal(needsReadyStatus(ready("Unknown")), true);
    assert.equal(needsReadyStatus({}), true);
  });

  it("renews the Lease in kube-node-lease with a MicroTime renewTime", () => {
    const lease = nodeLease("bulwark-edge-1", new Date("2026-01-02T03:04:05.678Z"));
    assert.equal(lease.metadata.namespace, "kube-node-lease");
    assert.equal(lease.spec.holderIdentity, "bulwark-edge-1");
    assert.equal(lease.spec.renewTime, "2026-01-02T03:04:05.678000Z");
    assert.equal(microTime(new Date(0)), "1970-01-01T00:00:00.000000Z");
    assert.equal(KEEPER_MANAGER, "bulwark-local-kubelet");
  });
});
