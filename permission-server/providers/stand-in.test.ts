// The stand-in authorization API itself (test/harness/authz-api.ts): what the provider tests and
// the benchmark rely on it to do.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { startAuthzApi, type AuthzApi } from "../../test/harness/authz-api";
import { waitUntil } from "../../test/harness/wait";

const permission = { ip: "10.5.0.1", resource: "orders-db", action: "write" };

async function post(api: AuthzApi, path: string, body: unknown): Promise<Response> {
  return fetch(`${api.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

const sleep = (ms: number) => new Promise(resolve => setTimeout(resolve, ms));

describe("stand-in authorization API", () => {
  it("counts the peak of requests in a sliding second, refused ones included", async () => {
    const api = await startAuthzApi({ rateLimitQps: 3 });
    try {
      const answers = await Promise.all(
        [1, 2, 3, 4, 5].map(i => post(api, "/v1/grants", { ...permission, ip: `10.5.1.${i}` })),
      );
      assert.deepEqual(answers.map(a => a.status).sort(), [202, 202, 202, 429, 429]);
      assert.equal(answers.find(a => a.status === 429)?.headers.get("retry-after"), "1");
      const stats = api.stats();
      assert.equal(stats.peakQps, 5);
      assert.equal(stats.requests, 5);
      assert.equal(stats.byStatus[429], 2);
      api.resetStats();
      assert.deepEqual(api.stats(), {
        requests: 0,
        byStatus: {},
        grantsPosted: 0,
        polls: 0,
        revocations: 0,
        peakQps: 0,
      });
    } finally {
      await api.close();
    }
  });

  it("finishes a slow job on its own, with nobody polling", async () => {
    const api = await startAuthzApi({ grantLatencyMs: 50 });
    try {
      const job = (await (await post(api, "/v1/grants", permission)).json()) as {
        id: string;
        state: string;
      };
      assert.equal(job.state, "pending");
      assert.equal(api.isGranted(permission.ip, permission.resource), false);
      await waitUntil("the job to grant on its own", () =>
        api.isGranted(permission.ip, permission.resource, "write"),
      );
      const polled = await (await fetch(`${api.url}/v1/grants/${job.id}`)).json();
      assert.deepEqual(polled, { id: job.id, state: "granted" });
    } finally {
      await api.close();
    }
  });

  it("cancels a pending job on revoke, so it never becomes a grant", async () => {
    const api = await startAuthzApi({ grantLatencyMs: 50 });
    try {
      await post(api, "/v1/grants", permission);
      const revoked = await (await post(api, "/v1/revocations", permission)).json();
      assert.deepEqual(revoked, { revoked: true });
      // That the job does NOT grant needs its latency (50 ms) to pass: a short, bounded wait.
      await sleep(120);
      assert.deepEqual(api.granted(), []);
      assert.deepEqual(api.grantHistory(), []);
    } finally {
      await api.close();
    }
  });

  it("injects 500s at the configured rate, drawn from the given random source", async () => {
    let next = 0;
    const api = await startAuthzApi({
      errorRate: 0.5,
      random: () => [0.1, 0.9][next++ % 2] as number,
    });
    try {
      const first = await post(api, "/v1/grants", permission);
      const second = await post(api, "/v1/grants", permission);
      assert.deepEqual([first.status, second.status], [500, 202]);
    } finally {
      await api.close();
    }
  });

  it("holds requests during a hang outage and answers them 503 when it ends", async () => {
    const api = await startAuthzApi();
    try {
      await api.setOutage("hang");
      const pending = post(api, "/v1/grants", permission);
      // Held once it has reached the server, which can take more than a moment on a busy machine.
      await waitUntil("the request to reach the server", () => api.stats().requests > 0, 10_000);
      assert.equal(api.stats().requests, 1, "the request reached the server");
      await api.setOutage(false);
      assert.equal((await pending).status, 503);
      assert.equal((await post(api, "/v1/grants", permission)).status, 202);
    } finally {
      await api.close();
    }
  });

  it("denies a permanently wrong parameter until it is allowed again", async () => {
    const api = await startAuthzApi();
    try {
      api.deny({ resource: "orders-db" }, "orders-db is retired", true);
      const refused = await post(api, "/v1/grants", permission);
      assert.equal(refused.status, 422);
      assert.deepEqual(await refused.json(), { error: "orders-db is retired" });
      api.allow("orders-db");
      assert.equal((await post(api, "/v1/grants", permission)).status, 202);
    } finally {
      await api.close();
    }
  });

  it("checks the token and rejects malformed bodies", async () => {
    const api = await startAuthzApi({ token: "t" });
    try {
      assert.equal((await post(api, "/v1/grants", permission)).status, 401);
      const bad = await fetch(`${api.url}/v1/grants`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: "Bearer t" },
        body: JSON.stringify({ ip: "10.0.0.1" }),
      });
      assert.equal(bad.status, 400);
      assert.deepEqual(await bad.json(), { error: "resource is required" });
    } finally {
      await api.close();
    }
  });
});
