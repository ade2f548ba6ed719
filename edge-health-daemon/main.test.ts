import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { daemonOptions, main, voteTermWarning } from "./main";
import { parseSettings } from "./settings";

describe("main", () => {
  it("--help and --version print and return 0", async () => {
    assert.equal(await main(["--help"]), 0);
    assert.equal(await main(["--version"]), 0);
  });

  it("a missing or invalid setting returns 2", async () => {
    const saved = process.env.BULWARK_NODE_NAME;
    delete process.env.BULWARK_NODE_NAME;
    try {
      assert.equal(await main([]), 2);
      assert.equal(await main(["--node-name=edge-1", "--check-period=0"]), 2);
      assert.equal(await main(["--node-name=edge-1", "--bogus"]), 2);
    } finally {
      if (saved !== undefined) process.env.BULWARK_NODE_NAME = saved;
    }
  });

  it("a start-up failure (no kubeconfig) returns 1", async () => {
    assert.equal(await main(["--node-name=edge-1", "--kubeconfig=/nonexistent/kubeconfig"]), 1);
  });
});

describe("daemonOptions: every engine setting comes from the parsed settings", () => {
  it("given non-default values, the engine gets them", () => {
    const parsed = parseSettings(
      [
        "--node-name=edge-7",
        "--check-period=2",
        "--vote-timeout=9",
        "--message-max-age=11",
        "--max-clock-skew=4",
        "--score-line=50",
        "--max-probe-peers=3",
        "--writer-fallback-periods=5",
        "--vote-term-periods=4",
        "--hmac-overlap=17",
        "--verify-source=false",
      ],
      {},
    );
    assert.equal(parsed.kind, "ok", JSON.stringify(parsed));
    if (parsed.kind !== "ok") return;
    const key = Buffer.from("0123456789abcdef");
    assert.deepEqual(daemonOptions(parsed.settings, [key]), {
      self: "edge-7",
      keys: [key],
      hmacOverlapMs: 17_000,
      maxClockSkewMs: 4000,
      checkPeriodMs: 2000,
      scoreLine: 50,
      voteTimeoutMs: 9000,
      messageMaxAgeMs: 11_000,
      maxProbePeers: 3,
      writerFallbackPeriods: 5,
      voteTermPeriods: 4,
      verifySource: false,
    });
  });
});

describe("voteTermWarning: a term admission would read as stale by default (10 minutes)", () => {
  const settings = (argv: string[]) => {
    const parsed = parseSettings(["--node-name=edge-1", ...argv], {});
    if (parsed.kind !== "ok") throw new Error(JSON.stringify(parsed));
    return parsed.settings;
  };
  it("3 periods of 200 s: none", () =>
    assert.equal(voteTermWarning(settings(["--check-period=200"])), undefined));
  it("3 periods of 201 s: names the Pepr module's setting", () =>
    assert.match(
      String(voteTermWarning(settings(["--check-period=201"]))?.setting),
      /^BULWARK_EDGE_MAX_VOTE_TERM_SECONDS/,
    ));
});
