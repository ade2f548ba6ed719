import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { limitExempt, parseRateLimit } from "./rate-limit";
import { parseIngressAnnotations } from "./index";
import { annotationKey } from "./validators";
import { parseIp } from "../net/ip";

const key = annotationKey;

function parsed(annotations: Record<string, string>) {
  const result = parseRateLimit(annotations);
  assert.ok(result.ok, JSON.stringify(result));
  return { value: result.value!, warnings: result.warnings };
}

describe("rate-limit annotations", () => {
  it("is absent when no key is set", () => {
    const result = parseRateLimit({ [key("enable-cors")]: "true" });
    assert.ok(result.ok);
    assert.equal(result.value, undefined);
  });

  it("reads ingress-nginx's documented example, with the default burst multiplier 5", () => {
    const { value } = parsed({ [key("limit-rps")]: "5", [key("limit-connections")]: "10" });
    assert.deepEqual(
      { ...value, allow: value.allow?.text },
      {
        rps: 5,
        rpm: 0,
        burstMultiplier: 5,
        connections: 10,
        allow: undefined,
        bandwidth: undefined,
      },
    );
  });

  it("reads limit-rpm and limit-burst-multiplier", () => {
    const { value } = parsed({ [key("limit-rpm")]: "300", [key("limit-burst-multiplier")]: "2" });
    assert.equal(value.rpm, 300);
    assert.equal(value.burstMultiplier, 2);
  });

  it("limit-allowlist exempts its networks; limit-whitelist is the older name", () => {
    const { value } = parsed({
      [key("limit-rps")]: "1",
      [key("limit-allowlist")]: "10.0.0.0/8, 192.168.1.7",
    });
    assert.deepEqual(value.allow?.text, ["10.0.0.0/8", "192.168.1.7"]);
    assert.equal(limitExempt(value, parseIp("10.2.3.4")!), true);
    assert.equal(limitExempt(value, parseIp("192.168.1.8")!), false);
    const old = parsed({ [key("limit-rps")]: "1", [key("limit-whitelist")]: "::1" });
    assert.equal(limitExempt(old.value, parseIp("::1")!), true);
  });

  it("warns when both names are set, and reads the new one", () => {
    const { value, warnings } = parsed({
      [key("limit-rps")]: "1",
      [key("limit-allowlist")]: "10.0.0.1",
      [key("limit-whitelist")]: "10.0.0.2",
    });
    assert.deepEqual(value.allow?.text, ["10.0.0.1"]);
    assert.match(warnings.join("\n"), /limit-whitelist" is ignored/);
  });

  it('an empty allowlist exempts nobody (ingress-nginx\'s ParseCIDRs of "")', () => {
    const { value } = parsed({ [key("limit-rps")]: "1", [key("limit-allowlist")]: "" });
    assert.equal(value.allow, undefined);
  });

  it("warns when nothing is limited", () => {
    const { warnings } = parsed({ [key("limit-burst-multiplier")]: "3" });
    assert.match(warnings.join("\n"), /have no effect/);
  });

  it("reads limit-rate and limit-rate-after in kilobytes, as nginx's `k` (1024 bytes)", () => {
    const { value, warnings } = parsed({
      [key("limit-rate")]: "100",
      [key("limit-rate-after")]: "1024",
    });
    assert.deepEqual(value.bandwidth, { bytesPerSecond: 102_400, after: 1_048_576 });
    assert.deepEqual(warnings, []);
    assert.deepEqual(parsed({ [key("limit-rate")]: "1" }).value.bandwidth, {
      bytesPerSecond: 1024,
      after: 0,
    });
  });

  it("limit-rate 0 paces nothing (ingress-nginx renders no limit_rate), and says so", () => {
    const { value, warnings } = parsed({ [key("limit-rate")]: "0" });
    assert.equal(value.bandwidth, undefined);
    assert.match(warnings.join("\n"), /have no effect/);
  });

  it("warns that limit-rate-after alone does nothing", () => {
    const { warnings } = parsed({ [key("limit-rps")]: "1", [key("limit-rate-after")]: "10" });
    assert.match(warnings.join("\n"), /limit-rate-after" has no effect without/);
  });

  it("refuses a bad limit-rate or limit-rate-after naming the key", () => {
    for (const [name, raw] of [
      ["limit-rate", "10k"],
      ["limit-rate", "-1"],
      ["limit-rate-after", "1.5"],
      ["limit-rate-after", String(1024 ** 3 + 1)],
    ] as const) {
      const result = parseIngressAnnotations({ [key(name)]: raw });
      assert.ok(!result.ok, `${name}: ${raw}`);
      assert.equal(result.errors[0]!.field, `metadata.annotations["${key(name)}"]`);
      assert.match(result.errors[0]!.message, /expected an integer between 0 and/);
    }
  });

  it("refuses bad values naming the key and what was expected", () => {
    const result = parseIngressAnnotations({
      [key("limit-rps")]: "ten",
      [key("limit-connections")]: "-1",
      [key("limit-burst-multiplier")]: "1.5",
      [key("limit-allowlist")]: "10.0.0.0/33",
    });
    assert.ok(!result.ok);
    const byField = Object.fromEntries(result.errors.map(e => [e.field, e.message]));
    assert.match(
      byField[`metadata.annotations["${key("limit-rps")}"]`]!,
      /expected an integer between 0 and 1000000, got "ten"/,
    );
    assert.match(byField[`metadata.annotations["${key("limit-connections")}"]`]!, /got "-1"/);
    assert.match(byField[`metadata.annotations["${key("limit-burst-multiplier")}"]`]!, /got "1.5"/);
    assert.match(
      byField[`metadata.annotations["${key("limit-allowlist")}"]`]!,
      /expected a comma-separated list of IP addresses or CIDRs, got "10.0.0.0\/33"/,
    );
  });
});
