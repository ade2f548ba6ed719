import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseSettings, SETTING_FLAGS, type Settings } from "./settings";

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
    assert.equal(s.metricsPort, undefined, "no metrics server unless a port is given");
    assert.equal(s.checkPeriodMs, 10_000);
    assert.equal(s.voteTimeoutMs, 30_000);
    assert.equal(s.voteTermPeriods, 3);
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
    assert.equal(s.messageMaxAgeMs, 30_000);
    assert.equal(s.maxClockSkewMs, 10_000);
    assert.equal(s.hmacReloadMs, 60_000);
    assert.equal(s.hmacOverlapMs, 300_000);
    assert.equal(s.verifySource, true);
    assert.equal(s.listenAddress, "0.0.0.0");
    assert.equal(s.writerFallbackPeriods, 3);
    assert.equal(s.zoneNamespace, "kube-system");
    assert.equal(s.logLevel, "info");
    const k = s.checks.find(c => c.kind === "kubelet");
    assert.deepEqual(
      [k?.scheme, k?.tokenFile, k?.caFile, k?.certFile, k?.retries],
      ["https", "/var/run/secrets/kubernetes.io/serviceaccount/token", undefined, undefined, 1],
    );
  });

  it("token-file=none: the kubelet check sends no bearer token (a client certificate instead)", () => {
    const k = ok(["--check-kubelet=token-file=none,cert-file=/c,key-file=/k"]).checks.find(
      c => c.kind === "kubelet",
    );
    assert.deepEqual([k?.tokenFile, k?.certFile, k?.keyFile], [undefined, "/c", "/k"]);
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
    ["an unknown flag", ["--frobnicate=1"], env, /unknown flag --frobnicate/],
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
      "a plugin key the daemon check would ignore",
      ["--check-daemon=port=80"],
      env,
      /^BULWARK_EDGE_CHECK_DAEMON .*port: unknown key for the daemon check \(known: weight, timeout, retries\)/,
    ],
    [
      "a token file on the tcp check",
      ["--check-tcp=port=22,token-file=/t"],
      env,
      /^BULWARK_EDGE_CHECK_TCP .*token-file: unknown key for the tcp check/,
    ],
    [
      "a client certificate without its key",
      ["--check-kubelet=cert-file=/c"],
      env,
      /^BULWARK_EDGE_CHECK_KUBELET .*cert-file, key-file: give both or neither/,
    ],
    [
      "a CA file on plain HTTP",
      ["--check-kubelet=scheme=http,port=10255,ca-file=/ca"],
      env,
      /^BULWARK_EDGE_CHECK_KUBELET .*ca-file: needs scheme=https/,
    ],
    [
      "a vote timeout not longer than the period",
      ["--check-period=5", "--vote-timeout=5"],
      env,
      /^BULWARK_EDGE_VOTE_TIMEOUT_SECONDS \(--vote-timeout\): 5s must be longer than the check period/,
    ],
    [
      "an HMAC reload period of 0",
      ["--hmac-reload=0"],
      env,
      /^BULWARK_EDGE_HMAC_RELOAD_SECONDS \(--hmac-reload\): must be at least 0.1/,
    ],
    [
      "a vote term of one period (it would lapse before the writer renews it)",
      ["--vote-term-periods=1"],
      env,
      /^BULWARK_EDGE_VOTE_TERM_PERIODS \(--vote-term-periods\): must be a whole number, at least 2$/,
    ],
    [
      "a vote term that is not a whole number of periods",
      ["--vote-term-periods=2.5"],
      env,
      /^BULWARK_EDGE_VOTE_TERM_PERIODS .*must be a whole number/,
    ],
    [
      "the metrics port on the peer port",
      ["--metrics-port=51005"],
      env,
      /^BULWARK_EDGE_METRICS_PORT \(--metrics-port\): 51005 is the peer port \(--port\); give \/metrics a port of its own$/,
    ],
    ["a bad metrics port", ["--metrics-port=0"], env, /^BULWARK_EDGE_METRICS_PORT .*1-65535/],
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

// Every flag, one row each: a value other than the default, and where it lands in the settings
// the daemon runs with (main.ts `daemonOptions` hands these to the engine: main.test.ts). A new
// flag without a row fails the coverage test below.
const kubelet = (s: Settings) => s.checks.find(c => c.kind === "kubelet");
const daemonCheck = (s: Settings) => s.checks.find(c => c.kind === "daemon");
const FLAG_TABLE: [
  flag: string,
  value: string,
  read: (s: Settings) => unknown,
  expected: unknown,
][] = [
  ["node-name", "edge-9", s => s.nodeName, "edge-9"],
  ["listen-address", "10.1.2.3", s => s.listenAddress, "10.1.2.3"],
  ["port", "6001", s => [s.port, daemonCheck(s)?.port], [6001, 6001]],
  ["metrics-port", "9464", s => s.metricsPort, 9464],
  ["check-period", "4", s => [s.checkPeriodMs, s.voteTimeoutMs], [4000, 12_000]],
  ["vote-timeout", "45", s => s.voteTimeoutMs, 45_000],
  ["vote-term-periods", "5", s => s.voteTermPeriods, 5],
  ["message-max-age", "12", s => s.messageMaxAgeMs, 12_000],
  ["max-clock-skew", "3", s => s.maxClockSkewMs, 3000],
  ["score-line", "50", s => s.scoreLine, 50],
  ["max-probe-peers", "5", s => s.maxProbePeers, 5],
  ["writer-fallback-periods", "7", s => s.writerFallbackPeriods, 7],
  ["zone-namespace", "zones", s => s.zoneNamespace, "zones"],
  ["hmac-key-file", "/k/key", s => s.hmacKeyFile, "/k/key"],
  ["hmac-secret", "ns-a/sec.b", s => s.hmacSecret, { namespace: "ns-a", name: "sec.b" }],
  ["hmac-reload", "0.5", s => s.hmacReloadMs, 500],
  ["hmac-overlap", "0", s => s.hmacOverlapMs, 0],
  ["verify-source", "false", s => s.verifySource, false],
  ["kubeconfig", "/k/config", s => s.kubeconfig, "/k/config"],
  ["log-level", "debug", s => s.logLevel, "debug"],
  [
    "check-daemon",
    "weight=1,timeout=1.5,retries=2",
    s =>
      daemonCheck(s) && [
        daemonCheck(s)?.weight,
        daemonCheck(s)?.timeoutMs,
        daemonCheck(s)?.retries,
      ],
    [1, 1500, 2],
  ],
  [
    "check-kubelet",
    "weight=0.75,port=10255,scheme=https,timeout=1,retries=0,token-file=/t,ca-file=/ca,cert-file=/c,key-file=/k",
    kubelet,
    {
      kind: "kubelet",
      weight: 0.75,
      port: 10255,
      scheme: "https",
      timeoutMs: 1000,
      retries: 0,
      tokenFile: "/t",
      caFile: "/ca",
      certFile: "/c",
      keyFile: "/k",
    },
  ],
  [
    "check-tcp",
    "port=22,weight=0.25,timeout=1,retries=1",
    s => s.checks.find(c => c.kind === "tcp"),
    { kind: "tcp", weight: 0.25, port: 22, timeoutMs: 1000, retries: 1, scheme: "http" },
  ],
];

describe("settings: every flag takes effect", () => {
  const envOf = (flag: string) => SETTING_FLAGS.find(f => f.flag === flag)?.env ?? "";
  const base = { BULWARK_NODE_NAME: "edge-1" };

  it("the table covers every setting except --config (tested below)", () => {
    assert.deepEqual(
      FLAG_TABLE.map(([flag]) => flag).sort(),
      SETTING_FLAGS.map(f => f.flag)
        .filter(f => f !== "config")
        .sort(),
    );
  });

  for (const [flag, value, read, expected] of FLAG_TABLE) {
    it(`given --${flag}=${value}, the setting changes from its default`, () => {
      const defaults = ok([], base);
      assert.notDeepEqual(read(defaults), expected, "the row must move the value off its default");
      assert.deepEqual(read(ok([`--${flag}=${value}`], base)), expected);
    });
    it(`given ${envOf(flag)}=${value} and no flag, the same`, () => {
      assert.deepEqual(read(ok([], { ...base, [envOf(flag)]: value })), expected);
    });
    it(`given --config with "${flag}", the same; a flag wins over it`, () => {
      const files = { "/etc/edge.json": JSON.stringify({ [flag]: value }) };
      const readFile = (path: string) => {
        const text = files[path as keyof typeof files];
        if (text === undefined) throw new Error(`ENOENT: ${path}`);
        return text;
      };
      // The node name from the environment would win over the file's.
      const env = flag === "node-name" ? {} : base;
      const fromFile = parseSettings(["--config=/etc/edge.json"], env, readFile);
      assert.equal(fromFile.kind, "ok", JSON.stringify(fromFile));
      if (fromFile.kind === "ok") assert.deepEqual(read(fromFile.settings), expected);
      const flagWins = parseSettings(
        ["--config=/etc/edge.json", ...(flag === "node-name" ? ["--node-name=edge-2"] : [])],
        { ...base, BULWARK_EDGE_CONFIG: "/nonexistent" },
        readFile,
      );
      assert.equal(flagWins.kind, "ok", "the --config flag wins over BULWARK_EDGE_CONFIG");
      if (flag === "node-name" && flagWins.kind === "ok") {
        assert.equal(flagWins.settings.nodeName, "edge-2");
      }
    });
  }
});

describe("settings: the config file", () => {
  const read = (text: string) => () => text;
  const env = { BULWARK_NODE_NAME: "edge-1" };
  const message = (text: string, argv: string[] = ["--config=/c.json"]): string => {
    const r = parseSettings(argv, env, read(text));
    return r.kind === "error" ? r.message : r.kind;
  };

  it("numbers and booleans are read as their text", () => {
    const r = parseSettings(
      ["--config=/c.json"],
      env,
      read('{"check-period": 5, "verify-source": false}'),
    );
    assert.equal(r.kind, "ok");
    if (r.kind === "ok")
      assert.deepEqual([r.settings.checkPeriodMs, r.settings.verifySource], [5000, false]);
  });

  it("the environment wins over the file", () => {
    const r = parseSettings(
      ["--config=/c.json"],
      { ...env, BULWARK_EDGE_CHECK_PERIOD_SECONDS: "7" },
      read('{"check-period": 5}'),
    );
    assert.equal(r.kind === "ok" && r.settings.checkPeriodMs, 7000);
  });

  const bad: [string, string, RegExp][] = [
    [
      "an unknown key",
      '{"check-periods": 5}',
      /^BULWARK_EDGE_CONFIG \(--config\) \/c\.json: unknown setting "check-periods"$/,
    ],
    [
      "a bad value, named by file and key",
      '{"check-period": "soon"}',
      /^BULWARK_EDGE_CONFIG \(--config\) \/c\.json: check-period: must be a number/,
    ],
    ["not JSON", "check-period: 5", /^BULWARK_EDGE_CONFIG \(--config\) \/c\.json: .*JSON/],
    ["an array", "[]", /must be a JSON object keyed by flag name/],
    [
      "a nested value",
      '{"check-daemon": {"weight": 1}}',
      /check-daemon: must be a string, number or boolean/,
    ],
  ];
  for (const [what, text, pattern] of bad) {
    it(`rejects ${what}`, () => assert.match(message(text), pattern));
  }

  it("a file that cannot be read is an error naming it", () => {
    const r = parseSettings(["--config=/missing.json"], env, () => {
      throw new Error("ENOENT: no such file");
    });
    assert.match(
      r.kind === "error" ? r.message : "",
      /^BULWARK_EDGE_CONFIG \(--config\) \/missing\.json: ENOENT/,
    );
  });
});
