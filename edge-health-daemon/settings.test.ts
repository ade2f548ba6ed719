import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseSettings } from "./settings";

const env = { BULWARK_NODE_NAME: "edge-1" };
const ok = (argv: string[], e: NodeJS.ProcessEnv = env) => {
  const r = parseSettings(argv, e);
  if (r.kind !== "ok") throw new Error(`expected settings, got ${JSON.stringify(r)}`);
  return r.settings;
};
const error = (argv: string[], e: NodeJS.ProcessEnv = env): string => {
  const r = parseSettings(argv, e);
  if (r.kind !== "error") throw new Error(`expected an error, got ${r.kind}`);
  return r.message;
};

describe("settings", () => {
  it("defaults: period 10 s, vote timeout 3 periods, line 100, daemon + kubelet checks at 0.5 each", () => {
    const s = ok([]);
    assert.equal(s.nodeName, "edge-1");
    assert.equal(s.port, 51005);
    assert.equal(s.checkPeriodMs, 10_000);
    assert.equal(s.voteTimeoutMs, 30_000);
    assert.equal(s.scoreLine, 100);
    assert.equal(s.maxProbePeers, 16);
    assert.deepEqual(
      s.checks.map(c => [c.kind, c.weight, c.port]),
      [
        ["daemon", 0.5, 51005],
        ["kubelet", 0.5, 10250],
      ],
    );
    assert.deepEqual(
      s.checks.map(c => c.timeoutMs),
      [2000, 2000],
    );
    assert.deepEqual(s.hmacSecret, { namespace: "edge-system", name: "bulwark-edge-health-hmac" });
  });

  it("flags take effect, and win over the environment", () => {
    const s = ok(
      [
        "--check-period=1",
        "--port",
        "6000",
        "--check-kubelet=off",
        "--check-daemon=weight=1,timeout=0.5,retries=0",
        "--check-tcp=port=22,weight=1",
        "--max-probe-peers=4",
        "--vote-timeout=2.5",
      ],
      { ...env, BULWARK_EDGE_CHECK_PERIOD_SECONDS: "7", BULWARK_EDGE_PORT: "7000" },
    );
    assert.equal(s.checkPeriodMs, 1000);
    assert.equal(s.port, 6000);
    assert.equal(s.voteTimeoutMs, 2500);
    assert.equal(s.maxProbePeers, 4);
    assert.deepEqual(
      s.checks.map(c => ({
        kind: c.kind,
        weight: c.weight,
        port: c.port,
        timeoutMs: c.timeoutMs,
        retries: c.retries,
      })),
      [
        { kind: "daemon", weight: 1, port: 6000, timeoutMs: 500, retries: 0 },
        { kind: "tcp", weight: 1, port: 22, timeoutMs: 800, retries: 0 },
      ],
    );
  });

  it("the environment is read when there is no flag", () => {
    assert.equal(ok([], { ...env, BULWARK_EDGE_CHECK_PERIOD_SECONDS: "7" }).checkPeriodMs, 7000);
  });

  const bad: [string, string[], NodeJS.ProcessEnv, RegExp][] = [
    [
      "no node name",
      [],
      {},
      /^BULWARK_NODE_NAME \(--node-name\) is required \(the node name, from the Downward API\)$/,
    ],
    [
      "a period that is not a number",
      ["--check-period=fast"],
      env,
      /^BULWARK_EDGE_CHECK_PERIOD_SECONDS .*must be a number/,
    ],
    ["a bad port", ["--port=70000"], env, /^BULWARK_EDGE_PORT .*1-65535/],
    ["an unknown flag", ["--frobnicate=1"], env, /unknown argument "--frobnicate=1"/],
    [
      "a plugin key that does not exist",
      ["--check-daemon=wieght=1"],
      env,
      /^BULWARK_EDGE_CHECK_DAEMON .*unknown key/,
    ],
    [
      "a tcp check without a port",
      ["--check-tcp=weight=1"],
      env,
      /^BULWARK_EDGE_CHECK_TCP .*port: is required/,
    ],
    ["every check off", ["--check-daemon=off", "--check-kubelet=off"], env, /every check is off/],
    [
      "a score line no check set can reach",
      ["--check-kubelet=off"],
      env,
      /^BULWARK_EDGE_SCORE_LINE: 100 is above the best possible score 50/,
    ],
    [
      "timeouts longer than the period",
      ["--check-period=1", "--check-daemon=weight=1,timeout=1,retries=1"],
      env,
      /check-daemon: timeout × attempts \(2s\) exceeds the check period \(1s\)/,
    ],
    [
      "a bad secret reference",
      ["--hmac-secret=just-a-name"],
      env,
      /^BULWARK_EDGE_HMAC_SECRET .*namespace\/name/,
    ],
    [
      "a bad boolean",
      ["--verify-source=yes"],
      env,
      /^BULWARK_EDGE_VERIFY_SOURCE .*"true" or "false"/,
    ],
  ];
  for (const [what, argv, e, pattern] of bad) {
    it(`rejects ${what}, naming the setting`, () => assert.match(error(argv, e), pattern));
  }

  it("--help and --version", () => {
    assert.equal(parseSettings(["--help"], {}).kind, "help");
    assert.equal(parseSettings(["--version"], {}).kind, "version");
  });
});
