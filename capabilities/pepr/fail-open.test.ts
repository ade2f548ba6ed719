import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { PeprMutateRequest, PeprValidateRequest, type a } from "pepr";
import { failOpenMutation, failOpenValidation } from "./fail-open";

/**
 * The AdmissionRequest the API server sends for creating `object` in namespace "ns". Typed `never`
 * so that both request classes take it: Pepr does not export its AdmissionRequest type.
 */
function createRequest(
  group: string,
  resource: string,
  object: { kind: string; metadata: { name: string; namespace: string } } & Record<string, unknown>,
): never {
  const gvk = { group, version: "v1", kind: object.kind };
  return {
    uid: "u",
    kind: gvk,
    resource: { group, version: "v1", resource },
    name: object.metadata.name,
    namespace: "ns",
    operation: "CREATE",
    userInfo: {},
    object,
  } as never;
}

function sliceRequest(): PeprMutateRequest<a.EndpointSlice> {
  return new PeprMutateRequest<a.EndpointSlice>(
    createRequest("discovery.k8s.io", "endpointslices", {
      apiVersion: "discovery.k8s.io/v1",
      kind: "EndpointSlice",
      metadata: { name: "web-abc", namespace: "ns" },
      addressType: "IPv4",
      endpoints: null,
    }),
  );
}

describe("failOpenMutation", () => {
  it("lets the write go on as sent when the mutation throws, with nothing of it applied", async () => {
    const req = sliceRequest();
    const sent = structuredClone(req.Raw);
    const mutation = failOpenMutation(function promoteSliceOnWrite(
      r: PeprMutateRequest<a.EndpointSlice>,
    ) {
      r.Raw.metadata = { ...r.Raw.metadata, annotations: { half: "applied" } };
      throw new TypeError("Cannot read properties of null (reading 'map')");
    });
    await mutation(req);
    assert.deepEqual(req.Raw, sent);
    assert.equal(mutation.name, "promoteSliceOnWrite");
  });

  it("keeps what a mutation that succeeds applied", async () => {
    const req = sliceRequest();
    await failOpenMutation((r: PeprMutateRequest<a.EndpointSlice>) => {
      r.Raw.metadata = { ...r.Raw.metadata, annotations: { kept: "yes" } };
    })(req);
    assert.deepEqual(req.Raw.metadata?.annotations, { kept: "yes" });
  });
});

describe("failOpenValidation", () => {
  const secretRequest = () =>
    new PeprValidateRequest<a.Secret>(
      createRequest("", "secrets", {
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: "tls", namespace: "ns" },
        type: "kubernetes.io/tls",
      }),
    );

  it("approves, with a warning naming the error, when the review throws", async () => {
    const review = failOpenValidation(async function validateTlsSecret(): Promise<never> {
      throw new Error("GET /api/v1/namespaces/ns/secrets/other: no answer in 8000 ms");
    });
    const answer = await review(secretRequest());
    assert.equal(answer.allowed, true);
    assert.match(
      answer.warnings?.[0] ?? "",
      /could not review this Secret \(GET .*no answer in 8000 ms\)/,
    );
    assert.equal(review.name, "validateTlsSecret");
  });

  it("passes a refusal through", async () => {
    const answer = await failOpenValidation(async (req: PeprValidateRequest<a.Secret>) =>
      req.Deny("tls.key does not match tls.crt", 422),
    )(secretRequest());
    assert.equal(answer.allowed, false);
  });
});
