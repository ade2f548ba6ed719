import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { ApiException } from "@kubernetes/client-node";
import { freePort } from "../hack/control-plane/ports";
import { apiMessage, describeError, isConflict, isNotFound, statusOf } from "./api-errors";

describe("describeError", () => {
  it("given Pepr's fluent-client failure object, returns the status and the API's message", () => {
    const failure = {
      ok: false,
      status: 403,
      statusText: "Forbidden",
      data: { kind: "Status", message: 'ingresschecksums is forbidden: User "x" cannot create' },
    };
    assert.equal(
      describeError(failure),
      'HTTP 403 Forbidden: ingresschecksums is forbidden: User "x" cannot create',
    );
  });
  it("given a failure object without a message, returns the status", () => {
    assert.equal(
      describeError({ status: 503, statusText: "Service Unavailable" }),
      "HTTP 503 Service Unavailable",
    );
  });
  it("given client-node's ApiException, returns the code and the Status message", () => {
    const body = JSON.stringify({ kind: "Status", message: 'pods "x" not found' });
    assert.equal(
      describeError(new ApiException(404, "Not Found", body, {})),
      'HTTP 404: pods "x" not found',
    );
  });
  it("given a fetch failure, returns the socket error under it", async () => {
    // A port that was free a moment ago: nothing listens there.
    const port = await freePort();
    const error = await fetch(`http://127.0.0.1:${port}/`).catch((e: unknown) => e);
    assert.equal(
      describeError(error),
      `fetch failed: connect ECONNREFUSED 127.0.0.1:${port} (is the API server in your kubeconfig reachable?)`,
    );
  });
  it("given the fluent client's network failure (status 400, the error under e), returns the socket error", async () => {
    const port = await freePort();
    const e = await fetch(`http://127.0.0.1:${port}/`).catch((thrown: unknown) => thrown);
    const failure = { ok: false, status: 400, statusText: "fetch failed", headers: {}, e };
    assert.match(describeError(failure), /^fetch failed: connect ECONNREFUSED/);
  });
  it("given an object with nothing known, returns its JSON, never [object Object]", () => {
    assert.equal(describeError({ reason: "odd" }), '{"reason":"odd"}');
  });
  it("given a plain Error or a string, returns the message", () => {
    assert.equal(describeError(new Error("boom")), "boom");
    assert.equal(describeError("text"), "text");
  });
});

describe("statusOf", () => {
  const cases: [string, unknown, number | undefined][] = [
    ["client-node's ApiException (code)", new ApiException(409, "Conflict", "{}", {}), 409],
    ["the fluent client's failure (status)", { ok: false, status: 404 }, 404],
    ["an HttpError (statusCode)", { statusCode: 422 }, 422],
    [
      "a Node error whose code is a string",
      Object.assign(new Error("x"), { code: "ECONNRESET" }),
      undefined,
    ],
    ["null", null, undefined],
    ["a string", "404", undefined],
  ];
  for (const [what, error, expected] of cases) {
    it(`given ${what}, returns ${expected}`, () => assert.equal(statusOf(error), expected));
  }
  it("isNotFound and isConflict read the same status", () => {
    assert.equal(isNotFound({ status: 404 }), true);
    assert.equal(isNotFound(new ApiException(404, "Not Found", "", {})), true);
    assert.equal(isNotFound({ status: 409 }), false);
    assert.equal(isConflict({ code: 409 }), true);
    assert.equal(isConflict(new Error("409")), false);
  });
});

describe("apiMessage", () => {
  it("given an ApiException with a Status body, returns the API server's message alone", () => {
    const body = JSON.stringify({ kind: "Status", message: 'secrets "tls" is forbidden' });
    assert.equal(
      apiMessage(new ApiException(403, "Forbidden", body, {})),
      'secrets "tls" is forbidden',
    );
  });
  it("given the fluent client's failure, returns the message of its data", () => {
    assert.equal(
      apiMessage({ status: 404, data: { message: 'pods "p" not found' } }),
      'pods "p" not found',
    );
  });
  it("given a body that is not JSON, returns the body's text", () => {
    assert.equal(
      apiMessage(new ApiException(502, "Bad Gateway", "upstream down", {})),
      "upstream down",
    );
  });
  it("given a plain Error, returns its message; given an object without a message, never [object Object]", () => {
    assert.equal(apiMessage(new Error("boom")), "boom");
    assert.equal(
      apiMessage({ status: 500, statusText: "Internal Server Error" }),
      "HTTP 500 Internal Server Error",
    );
  });
});
