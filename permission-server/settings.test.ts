import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { loadSettings } from "./settings";

describe("permission server settings", () => {
  it("given nothing, uses the issue's defaults (backoff 2m ×2 jitter 1, 5 steps, cap 1h; breaker 3)", () => {
    const loaded = loadSettings({}, []);
    assert.ok(loaded.ok);
    const { settings } = loaded as Extract<typeof loaded, { ok: true }>;
    assert.deepEqual(settings.backoff, {
      durationMs: 120_000,
      factor: 2,
      jitter: 1,
      steps: 5,
      capMs: 3_600_000,
    });
    assert.equal(settings.breakerThreshold, 3);
    assert.equal(settings.port, 8443);
    assert.equal(settings.metricsPort, undefined, "no plain metrics port unless set");
    assert.equal(settings.cmdb, undefined);
  });

  it("takes flags over the environment", () => {
    const loaded = loadSettings({ BULWARK_PERMISSION_PORT: "1" }, [
      "--port",
      "9000",
      "--namespace=perm",
    ]);
    assert.ok(loaded.ok && loaded.settings.port === 9000 && loaded.settings.namespace === "perm");
  });

  it("reads the plain metrics port from the environment or --metrics-port", () => {
    const fromEnv = loadSettings({ BULWARK_PERMISSION_METRICS_PORT: "9465" }, []);
    assert.ok(fromEnv.ok && fromEnv.settings.metricsPort === 9465);
    const fromFlag = loadSettings({}, ["--metrics-port=0"]);
    assert.ok(fromFlag.ok && fromFlag.settings.metricsPort === 0);
  });

  const bad: [Record<string, string>, string[], RegExp][] = [
    [{ BULWARK_BACKOFF_DURATION: "soon" }, [], /^BULWARK_BACKOFF_DURATION must be a duration/],
    [
      { BULWARK_BREAKER_THRESHOLD: "0" },
      [],
      /^BULWARK_BREAKER_THRESHOLD must be an integer from 1 to 100/,
    ],
    [
      { BULWARK_TLS_CERT_PATH: "/c.pem" },
      [],
      /BULWARK_TLS_CERT_PATH and BULWARK_TLS_KEY_PATH must be set together/,
    ],
    [{ BULWARK_CMDB_PARAMS: "[1]" }, [], /BULWARK_CMDB_PARAMS must be a JSON object/],
    [{ BULWARK_NAMESPACE: "Bad_NS" }, [], /^BULWARK_NAMESPACE must be a Kubernetes object name/],
    [
      { BULWARK_PERMISSION_METRICS_PORT: "metrics" },
      [],
      /^BULWARK_PERMISSION_METRICS_PORT must be an integer from 0 to 65535; got "metrics"$/,
    ],
    [{}, ["--nope"], /^unknown flag --nope/],
    [{}, ["--port"], /^--port needs a value \(BULWARK_PERMISSION_PORT\)/],
  ];
  for (const [env, argv, message] of bad) {
    it(`given ${JSON.stringify(env)} ${argv.join(" ")}, names the setting in one line`, () => {
      const loaded = loadSettings(env, argv);
      assert.equal(loaded.ok, false);
      assert.match((loaded as { message: string }).message, message);
      assert.doesNotMatch((loaded as { message: string }).message, /\n/);
    });
  }
});
