import assert from "node:assert/strict";
import { after, before, beforeEach, describe, it } from "node:test";
import { startAuthzApi, type AuthzApi } from "../../test/harness/authz-api";
import { waitUntil } from "../../test/harness/wait";
import {
  backendMessage,
  GrantLostError,
  HttpProvider,
  parseHttpCredentials,
  retryAfterMs,
} from "./http";
import { TransientProviderError, type GrantRequest, type GrantState } from "./types";

const TOKEN = "s3cret-token";

function request(overrides: Partial<GrantRequest> = {}): GrantRequest {
  return {
    podUid: "9f1c2d3e-0000-4000-8000-000000000001",
    namespace: "shop",
    pod: "web-1",
    ip: "10.1.2.3",
    group: "orders",
    params: { resource: "orders-db", action: "read", port: 5432 },
    ...overrides,
  };
}

const never = new AbortController().signal;

function provider(api: AuthzApi, timeoutMs = 2000, token = TOKEN): HttpProvider {
  return new HttpProvider({
    name: "authz",
    address: api.url,
    timeoutMs,
    auth: { kind: "bearer", token },
  });
}

async function pollUntilDone(p: HttpProvider, req: GrantRequest, first: GrantState) {
  if (first.state !== "pending") return first;
  const { jobId } = first;
  return waitUntil(`job ${jobId} to leave pending`, async () => {
    const state = await p.poll(req, jobId, never);
    return state.state !== "pending" && state;
  });
}

async function transient(promise: Promise<unknown>): Promise<TransientProviderError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof TransientProviderError, `expected transient, got ${String(error)}`);
    return error;
  }
  assert.fail("expected a TransientProviderError");
}

describe("http provider against the stand-in authorization API", () => {
  let api: AuthzApi;
  before(async () => {
    api = await startAuthzApi({ token: TOKEN });
  });
  after(() => api.close());
  beforeEach(async () => {
    await api.setOutage(false);
    api.configure({ grantLatencyMs: 0, errorRate: 0, rateLimitQps: undefined, responseDelayMs: 0 });
  });

  it("given a fast API, grant answers granted and the API records (ip, permission)", async () => {
    const req = request({ ip: "10.1.0.1" });
    const state = await provider(api).grant(req, never);
    assert.equal(state.state, "granted");
    assert.ok(api.isGranted("10.1.0.1", "orders-db", "read"));
    const record = api.granted().find(g => g.ip === "10.1.0.1");
    assert.equal(record?.port, 5432);
    assert.equal(record?.podUid, req.podUid);
  });

  it("given a slow API, grant answers pending and polling ends granted", async () => {
    api.configure({ grantLatencyMs: 150 });
    const req = request({ ip: "10.1.0.2" });
    const p = provider(api);
    const first = await p.grant(req, never);
    assert.equal(first.state, "pending");
    assert.equal(api.isGranted("10.1.0.2", "orders-db"), false);
    const done = await pollUntilDone(p, req, first);
    assert.deepEqual(done, { state: "granted", jobId: first.jobId });
    assert.ok(api.isGranted("10.1.0.2", "orders-db", "read"));
  });

  it("is idempotent: granting twice gives the same job and one grant; revoking twice succeeds", async () => {
    api.configure({ grantLatencyMs: 100 });
    const req = request({ ip: "10.1.0.3" });
    const p = provider(api);
    const one = await p.grant(req, never);
    const two = await p.grant(req, never);
    assert.equal(one.state, "pending");
    assert.equal(two.jobId, one.jobId);
    await pollUntilDone(p, req, one);
    const three = await p.grant(req, never);
    assert.deepEqual(three, { state: "granted", jobId: one.jobId });
    assert.equal(api.grantHistory().filter(g => g.ip === "10.1.0.3").length, 1);
    await p.revoke(req, never);
    await p.revoke(req, never);
    assert.equal(api.isGranted("10.1.0.3", "orders-db"), false);
    const revocations = api.revocations().filter(r => r.ip === "10.1.0.3");
    assert.deepEqual(
      revocations.map(r => r.removed),
      [true, false],
    );
  });

  it("given malformed params, answers denied naming the field, without calling the API", async () => {
    const before = api.stats().requests;
    const p = provider(api);
    const bad = await p.grant(request({ params: { resource: "orders-db", action: "own" } }), never);
    assert.equal(bad.state, "denied");
    assert.match(
      (bad as { reason: string }).reason,
      /^params\.action: must be one of read, write, admin/,
    );
    const missing = await p.grant(request({ params: { action: "read" } }), never);
    assert.match((missing as { reason: string }).reason, /params\.resource: is required/);
    const extra = await p.grant(
      request({ params: { resource: "a", action: "read", db: "x" } }),
      never,
    );
    assert.match((extra as { reason: string }).reason, /params/);
    const badIp = await p.grant(request({ ip: "10.1.2" }), never);
    assert.match((badIp as { reason: string }).reason, /^ip: must be an IPv4 or IPv6 address/);
    assert.equal(api.stats().requests, before);
  });

  it("given a permanently wrong parameter, the job ends denied with the API's reason", async () => {
    api.deny({ resource: "no-such-db" }, "no-such-db does not exist in the inventory");
    api.configure({ grantLatencyMs: 50 });
    const req = request({ ip: "10.1.0.4", params: { resource: "no-such-db", action: "read" } });
    const p = provider(api);
    const done = await pollUntilDone(p, req, await p.grant(req, never));
    assert.equal(done.state, "denied");
    assert.equal((done as { reason: string }).reason, "no-such-db does not exist in the inventory");
  });

  it("given a 4xx for the request, answers denied with the server's message", async () => {
    api.deny(
      { resource: "forbidden-db", action: "admin" },
      "admin on forbidden-db needs approval",
      true,
    );
    const req = request({ params: { resource: "forbidden-db", action: "admin" } });
    const state = await provider(api).grant(req, never);
    assert.deepEqual(state, {
      state: "denied",
      reason: "grant: HTTP 422: admin on forbidden-db needs approval",
    });
  });

  it("given a 429 with Retry-After, throws transient with retryAfterMs", async () => {
    const limited = await startAuthzApi({ token: TOKEN, rateLimitQps: 2 });
    const p = provider(limited);
    const outcomes = await Promise.allSettled(
      [1, 2, 3].map(i => p.grant(request({ ip: `10.2.0.${i}` }), never)),
    );
    await limited.close();
    const rejected = outcomes.filter(o => o.status === "rejected");
    assert.equal(rejected.length, 1);
    const error = (rejected[0] as PromiseRejectedResult).reason as TransientProviderError;
    assert.ok(error instanceof TransientProviderError);
    assert.equal(error.retryAfterMs, 1000);
    assert.match(error.message, /429 rate limited: rate limit 2\/s exceeded/);
  });

  it("given a 5xx, throws transient", async () => {
    api.configure({ errorRate: 1 });
    const error = await transient(provider(api).grant(request(), never));
    assert.match(error.message, /HTTP 500: internal error \(injected\)/);
  });

  it("given an outage (503 with Retry-After), throws transient with the wait", async () => {
    await api.setOutage("unavailable");
    const error = await transient(provider(api).poll(request(), "job-1", never));
    assert.equal(error.retryAfterMs, 5000);
  });

  it("given an outage refusing connections, throws transient; after it, grants again", async () => {
    await api.setOutage("refuse");
    const p = provider(api);
    // The first may meet a kept-alive socket being cut (UND_ERR_SOCKET), later ones a refusal.
    assert.match(
      (await transient(p.grant(request({ ip: "10.3.0.1" }), never))).message,
      /cannot reach/,
    );
    const error = await transient(p.revoke(request({ ip: "10.3.0.1" }), never));
    assert.match(error.message, /cannot reach .*ECONNREFUSED/);
    await api.setOutage(false);
    assert.equal((await p.grant(request({ ip: "10.3.0.1" }), never)).state, "granted");
  });

  it("given an API that never answers, times out as transient", async () => {
    await api.setOutage("hang");
    const error = await transient(provider(api, 200).grant(request(), never));
    assert.match(error.message, /grant: no answer within 200 ms/);
  });

  it("given a slow answer and the caller aborting, rejects with the caller's reason, not transient", async () => {
    api.configure({ responseDelayMs: 2000 });
    const controller = new AbortController();
    const arrived = api.stats().requests;
    const pending = provider(api).grant(request(), controller.signal);
    void pending.catch(() => undefined); // asserted below; not unhandled while it waits
    // Aborted while the API holds the request.
    await waitUntil("the request at the API", () => api.stats().requests > arrived);
    controller.abort(new Error("server shutting down"));
    await assert.rejects(pending, (error: unknown) => {
      assert.ok(!(error instanceof TransientProviderError));
      assert.match(String(error), /server shutting down/);
      return true;
    });
  });

  it("given a wrong token, throws transient (a setup fault, not the pod's)", async () => {
    const error = await transient(provider(api, 2000, "wrong").grant(request(), never));
    assert.match(error.message, /HTTP 401/);
  });

  it("given basic credentials, authenticates with them", async () => {
    const basic = await startAuthzApi({ basic: { username: "bulwark", password: "p:w d" } });
    try {
      const auth = parseHttpCredentials({ username: "bulwark", password: "p:w d" });
      assert.ok(auth.ok);
      const p = new HttpProvider({
        name: "b",
        address: `${basic.url}/`,
        timeoutMs: 2000,
        auth: auth.value,
      });
      assert.equal((await p.grant(request(), never)).state, "granted");
      const anonymous = new HttpProvider({ name: "b", address: basic.url, timeoutMs: 2000 });
      await transient(anonymous.grant(request(), never));
    } finally {
      await basic.close();
    }
  });

  it("given a job the API forgot, poll throws GrantLostError (transient) so the runner grants again", async () => {
    api.configure({ grantLatencyMs: 5000 });
    const p = provider(api);
    const req = request({ ip: "10.4.0.1" });
    const first = await p.grant(req, never);
    api.forgetJobs();
    await assert.rejects(p.poll(req, first.jobId ?? "", never), GrantLostError);
  });
});

describe("http provider helpers", () => {
  it("reads Retry-After as seconds or an HTTP date", () => {
    assert.equal(retryAfterMs("3"), 3000);
    assert.equal(
      retryAfterMs("Wed, 21 Oct 2015 07:28:10 GMT", Date.parse("Wed, 21 Oct 2015 07:28:00 GMT")),
      10_000,
    );
    assert.equal(retryAfterMs(null), undefined);
    assert.equal(retryAfterMs("soon"), undefined);
  });

  it("takes the backend's message from error, message or the text", () => {
    assert.equal(backendMessage('{"error":"no"}'), "no");
    assert.equal(backendMessage('{"message":"nope"}'), "nope");
    assert.equal(backendMessage("<html>\n Bad Gateway </html>"), "<html> Bad Gateway </html>");
    assert.equal(backendMessage(""), "(no message)");
  });

  it("parses credentials and names the wrong key", () => {
    assert.deepEqual(parseHttpCredentials(undefined), { ok: true, value: undefined, warnings: [] });
    assert.deepEqual(parseHttpCredentials({ token: "t" }), {
      ok: true,
      value: { kind: "bearer", token: "t" },
      warnings: [],
    });
    const noPassword = parseHttpCredentials({ username: "u" });
    assert.equal(!noPassword.ok && noPassword.errors[0]?.field, "password");
    const both = parseHttpCredentials({ token: "t", username: "u", password: "p" });
    assert.equal(!both.ok && both.errors[0]?.field, "token");
    const colon = parseHttpCredentials({ username: "a:b", password: "p" });
    assert.equal(!colon.ok && colon.errors[0]?.field, "username");
  });
});
