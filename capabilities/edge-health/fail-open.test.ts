import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { PeprMutateRequest, type a } from "pepr";
import { failOpen } from "./fail-open";

function sliceRequest(): PeprMutateRequest<a.EndpointSlice> {
  const object = {
    apiVersion: "discovery.k8s.io/v1",
    kind: "EndpointSlice",
    metadata: { name: "web-abc", namespace: "ns" },
    addressType: "IPv4",
    endpoints: null,
  } as unknown as a.EndpointSlice;
  const gvk = { group: "discovery.k8s.io", version: "v1", kind: "EndpointSlice" };
  return new PeprMutateRequest<a.EndpointSlice>({
    uid: "u",
    kind: gvk,
    resource: { group: "discovery.k8s.io", version: "v1", resource: "endpointslices" },
    name: "web-abc",
    namespace: "ns",
    operation: "CREATE",
    userInfo: {},
    object,
  } as unknown as ConstructorParameters<typeof PeprMutateRequest<a.EndpointSlice>>[0]);
}

describe("failOpen", () => {
  it("lets the write go on as sent when the mutation throws, with nothing of it applied", async () => {
    const req = sliceRequest();
    const sent = structuredClone(req.Raw);
    const mutation = failOpen(function promoteSliceOnWrite(r: PeprMutateRequest<a.EndpointSlice>) {
      r.Raw.metadata = { ...r.Raw.metadata, annotations: { half: "applied" } };
      throw new TypeError("Cannot read properties of null (reading 'map')");
    });
    await mutation(req);
    assert.deepEqual(req.Raw, sent);
    assert.equal(mutation.name, "promoteSliceOnWrite");
  });

  it("keeps what a mutation that succeeds applied", async () => {
    const req = sliceRequest();
    await failOpen((r: PeprMutateRequest<a.EndpointSlice>) => {
      r.Raw.metadata = { ...r.Raw.metadata, annotations: { kept: "yes" } };
    })(req);
    assert.deepEqual(req.Raw.metadata?.annotations, { kept: "yes" });
  });
});
