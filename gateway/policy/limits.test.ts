import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { parseRateLimit, type RateLimitConfig } from "../../core/annotations";
import { parseIp } from "../../core/net/ip";
import { Limits, limitsFor } from "./limits";

const P = "nginx.ingress.kubernetes.io/";

function config(annotations: Record<string, string>): RateLimitConfig {
  const parsed = parseRateLimit(annotations);
  assert.ok(parsed.ok && parsed.value !== undefined);
  return parsed.value;
}

const A = parseIp("192.0.2.1")!;
const B = parseIp("2001:db8::1")!;

describe("Limits", () => {
  it("answers with the configured status and its reason phrase", () => {
    const limits = new Limits(config({ [`${P}limit-rps`]: "1" }), 429, 1);
    assert.equal(limits.answer.status, 429);
    assert.equal(limits.answer.body, "429 Too Many Requests\n");
  });

  it("limit_req before limit_conn; a refused request holds no slot; release is once", () => {
    let now = 0;
    const limits = new Limits(
      config({
        [`${P}limit-rps`]: "1",
        [`${P}limit-burst-multiplier`]: "1",
        [`${P}limit-connections`]: "1",
      }),
      503,
      1,
      () => now,
    );
    const first = limits.admit(A);
    assert.equal(typeof first, "function");
    assert.equal(limits.admit(A), "connection-limited");
    assert.equal(limits.admit(A), "rate-limited");
    (first as () => void)();
    (first as () => void)();
    now = 5000;
    const again = limits.admit(A);
    assert.equal(typeof again, "function");
    assert.equal(limits.connections?.size, 1);
    assert.equal(typeof limits.admit(B), "function", "IPv6 clients have their own count");
  });

  it("divides the limits among workers: rate, burst, and connections rounded up", () => {
    const limits = new Limits(
      config({ [`${P}limit-rps`]: "10", [`${P}limit-connections`]: "3" }),
      503,
      2,
    );
    assert.deepEqual(limits.requests?.rates, [{ rate: 5000, burst: 25_000 }]);
    assert.equal(limits.connections?.limit, 2);
  });

  it("exempts limit-allowlist", () => {
    let now = 0;
    const limits = new Limits(
      config({
        [`${P}limit-rpm`]: "1",
        [`${P}limit-burst-multiplier`]: "0",
        [`${P}limit-allowlist`]: "192.0.2.0/24",
      }),
      503,
      1,
      () => now++,
    );
    for (let i = 0; i < 5; i++) assert.equal(typeof limits.admit(A), "function");
    assert.equal(typeof limits.admit(B), "function");
    assert.equal(limits.admit(B), "rate-limited");
  });
});

describe("limitsFor", () => {
  const options = { status: 503, share: 1 };
  it("gives a rebuilt table the same counts while the configuration is the same", () => {
    const rps = config({ [`${P}limit-rps`]: "1" });
    const first = limitsFor("ns/app", rps, options);
    assert.ok(first !== undefined);
    assert.equal(limitsFor("ns/app", config({ [`${P}limit-rps`]: "1" }), options), first);
    assert.notEqual(limitsFor("ns/other", rps, options), first);
    assert.notEqual(limitsFor("ns/app", config({ [`${P}limit-rps`]: "2" }), options), first);
  });

  it("is undefined when nothing is limited", () => {
    assert.equal(limitsFor("ns/app", undefined, options), undefined);
    assert.equal(limitsFor("ns/app", config({ [`${P}limit-rps`]: "0" }), options), undefined);
  });
});
