import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  encodeGrpcMessage,
  GrpcCode,
  grpcCodeFor,
  grpcTimeoutMs,
  isGrpcRequest,
  trailersOnly,
} from "./status";

describe("grpc-timeout", () => {
  it("reads every unit of the spec", () => {
    assert.equal(grpcTimeoutMs("2H"), 7_200_000);
    assert.equal(grpcTimeoutMs("3M"), 180_000);
    assert.equal(grpcTimeoutMs("4S"), 4000);
    assert.equal(grpcTimeoutMs("250m"), 250);
    assert.equal(grpcTimeoutMs("1500u"), 2);
    assert.equal(grpcTimeoutMs("99999999n"), 100);
  });
  it("keeps a positive timeout under 1 ms positive, and 0 as 0", () => {
    assert.equal(grpcTimeoutMs("1n"), 1);
    assert.equal(grpcTimeoutMs("0S"), 0);
  });
  it("ignores what is not 1 to 8 digits and a unit", () => {
    for (const bad of ["", "5", "S", "123456789S", "1.5S", "-1S", "5s ", " 5S", "5X", "5SS"]) {
      assert.equal(grpcTimeoutMs(bad), undefined, JSON.stringify(bad));
    }
    assert.equal(grpcTimeoutMs(undefined), undefined);
  });
});

describe("grpc-message", () => {
  it("percent-encodes UTF-8 bytes outside printable ASCII, and % itself", () => {
    assert.equal(encodeGrpcMessage("plain text, ok!"), "plain text, ok!");
    assert.equal(encodeGrpcMessage("100% é\n"), "100%25 %C3%A9%0A");
  });
  it("answers trailers-only: HTTP 200 with the gRPC status in the headers", () => {
    assert.deepEqual(trailersOnly(GrpcCode.UNAVAILABLE, "no endpoint"), {
      ":status": 200,
      "content-type": "application/grpc",
      "grpc-status": "14",
      "grpc-message": "no endpoint",
    });
  });
});

describe("gRPC codes for the gateway's answers", () => {
  it("follows gRPC's HTTP mapping, the gateway's timeout and limits more precisely", () => {
    assert.equal(grpcCodeFor(401), GrpcCode.UNAUTHENTICATED);
    assert.equal(grpcCodeFor(403, "source-range-denied"), GrpcCode.PERMISSION_DENIED);
    assert.equal(grpcCodeFor(404), GrpcCode.UNIMPLEMENTED);
    assert.equal(grpcCodeFor(502), GrpcCode.UNAVAILABLE);
    assert.equal(grpcCodeFor(503), GrpcCode.UNAVAILABLE);
    assert.equal(grpcCodeFor(503, "rate-limited"), GrpcCode.RESOURCE_EXHAUSTED);
    assert.equal(grpcCodeFor(429, "connection-limited"), GrpcCode.RESOURCE_EXHAUSTED);
    assert.equal(grpcCodeFor(413), GrpcCode.RESOURCE_EXHAUSTED);
    assert.equal(grpcCodeFor(504), GrpcCode.DEADLINE_EXCEEDED);
    assert.equal(grpcCodeFor(418), GrpcCode.UNKNOWN);
  });
  it("knows a gRPC request by its content type", () => {
    for (const yes of ["application/grpc", "application/grpc+proto", "Application/GRPC;x=1"]) {
      assert.equal(isGrpcRequest(yes), true, yes);
    }
    for (const no of [undefined, "application/json", "application/grpc-web", "application/grpcx"]) {
      assert.equal(isGrpcRequest(no), false, String(no));
    }
  });
});
