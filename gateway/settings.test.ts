import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readSettings } from "./settings";

describe("gateway settings", () => {
  it("given only the pod name, takes the documented defaults", () => {
    const result = readSettings({ BULWARK_POD_NAME: "bulwark-gateway-3" });
    assert.ok(result.ok);
    const s = result.settings;
    assert.equal(s.ordinal, 3);
    assert.deepEqual([s.httpPort, s.httpsPort, s.adminPort], [8080, 8443, 9090]);
    assert.deepEqual(s.checksum, { ingress: "off", secret: "off" });
    assert.deepEqual(s.watchNamespaces, []);
    assert.equal(s.workers, 1);
    assert.equal(s.listenMode, "round-robin");
  });

  it("takes the listen mode by name and refuses any other, naming the setting", () => {
    const set = readSettings({ BULWARK_POD_NAME: "g-0", BULWARK_LISTEN_MODE: "reuse-port" });
    assert.ok(set.ok);
    assert.equal(set.settings.listenMode, "reuse-port");
    const bad = readSettings({ BULWARK_POD_NAME: "g-0", BULWARK_LISTEN_MODE: "reuseport" });
    assert.equal(bad.ok, false);
    assert.match(
      bad.ok ? "" : bad.message,
      /^BULWARK_LISTEN_MODE must be one of round-robin, reuse-port; got "reuseport"/,
    );
  });

  it("given nothing about traffic, metrics and access log are on, 20 canaries, redirects to 443, exact match", () => {
    const result = readSettings({ BULWARK_POD_NAME: "g-0" });
    assert.ok(result.ok);
    assert.deepEqual(result.settings.observe, { metrics: true, accessLog: true });
    assert.deepEqual(result.settings.compile, {
      maxCanaries: 20,
      canaryReferrers: [""],
      traffic: {
        redirectPort: 443,
        compare: "exact",
        limits: { status: 503, share: 1 },
        auth: { connectTimeoutMs: 5000, readTimeoutMs: 15000 },
      },
    });
    assert.deepEqual([...result.settings.excludedNamespaces], ["kube-system", "pepr-system"]);
    assert.deepEqual([...result.settings.ingressReferrers], [""]);
  });

  it("given traffic settings, takes them", () => {
    const result = readSettings({
      BULWARK_POD_NAME: "g-0",
      BULWARK_ACCESS_LOG: "off",
      BULWARK_MAX_CANARIES: "200",
      BULWARK_SSL_REDIRECT_PORT: "8443",
      BULWARK_CANARY_MATCH: "case-insensitive",
      BULWARK_LIMIT_STATUS: "429",
      BULWARK_WORKERS: "3",
      BULWARK_AUTH_CONNECT_TIMEOUT_SECONDS: "2",
      BULWARK_AUTH_READ_TIMEOUT_SECONDS: "30",
      BULWARK_CANARY_REFERRERS: "release-bot,cms",
      BULWARK_INGRESS_REFERRERS: "shop",
      BULWARK_EXCLUDED_NAMESPACES: "",
    });
    assert.ok(result.ok);
    assert.equal(result.settings.observe.accessLog, false);
    assert.deepEqual(result.settings.compile, {
      maxCanaries: 200,
      canaryReferrers: ["release-bot", "cms"],
      traffic: {
        redirectPort: 8443,
        compare: "case-insensitive",
        limits: { status: 429, share: 3 },
        auth: { connectTimeoutMs: 2000, readTimeoutMs: 30000 },
      },
    });
    assert.deepEqual([...result.settings.ingressReferrers], ["shop"]);
    assert.deepEqual([...result.settings.excludedNamespaces], []);
  });

  it("refuses a limit status outside 400..599, naming the setting", () => {
    const result = readSettings({ BULWARK_POD_NAME: "g-0", BULWARK_LIMIT_STATUS: "302" });
    assert.equal(result.ok, false);
    assert.match(
      !result.ok ? result.message : "",
      /^BULWARK_LIMIT_STATUS must be an integer from 400 to 599; got "302"/,
    );
  });

  it("given a bad excluded namespace, names the setting", () => {
    const result = readSettings({ BULWARK_POD_NAME: "g-0", BULWARK_EXCLUDED_NAMESPACES: "Bad_NS" });
    assert.deepEqual(result, {
      ok: false,
      message:
        'BULWARK_EXCLUDED_NAMESPACES: expected namespace names separated by ",", got "Bad_NS"',
    });
  });

  it("given publisher namespaces, trusts them; otherwise bulwark-system, never the watched namespaces", () => {
    const named = readSettings({
      BULWARK_POD_NAME: "g-0",
      BULWARK_WATCH_NAMESPACES: "a, b",
      BULWARK_CHECKSUM_PUBLISHER_NAMESPACES: "guard, release",
    });
    const old = readSettings({ BULWARK_POD_NAME: "g-0", BULWARK_CHECKSUM_NAMESPACES: "guard" });
    const watched = readSettings({
      BULWARK_POD_NAME: "g-0",
      BULWARK_WATCH_NAMESPACES: "a,b",
      BULWARK_INGRESS_CHECKSUM: "on",
    });
    assert.ok(named.ok && old.ok && watched.ok);
    assert.deepEqual(named.settings.checksumNamespaces, ["guard", "release"]);
    // The old name still works, as a list of publishers.
    assert.deepEqual(old.settings.checksumNamespaces, ["guard"]);
    assert.deepEqual(watched.settings.checksumNamespaces, ["bulwark-system"]);
    assert.equal(watched.settings.checksum.ingress, "enforce");
  });

  it("given a guard mode per kind, takes it; true/false keep meaning enforce/off", () => {
    const modes = readSettings({
      BULWARK_POD_NAME: "g-0",
      BULWARK_INGRESS_CHECKSUM: "observe",
      BULWARK_SECRET_CHECKSUM: "false",
    });
    assert.ok(modes.ok);
    assert.deepEqual(modes.settings.checksum, { ingress: "observe", secret: "off" });
    const bad = readSettings({ BULWARK_POD_NAME: "g-0", BULWARK_SECRET_CHECKSUM: "maybe" });
    assert.ok(!bad.ok);
    assert.match(bad.message, /^BULWARK_SECRET_CHECKSUM must be off, observe or enforce .*"maybe"/);
  });

  it("given nothing about the front door, takes nginx's limits; given settings, takes them", () => {
    const plain = readSettings({ BULWARK_POD_NAME: "g-0" });
    assert.ok(plain.ok);
    assert.deepEqual(plain.settings.frontDoor, {
      headTimeoutMs: 60_000,
      bodyTimeoutMs: 60_000,
      maxHeadBytes: 65_536,
      maxTargetBytes: 8192,
      maxFieldBytes: 16_384,
      underscoresInHeaders: false,
      trustedProxies: [],
      proxyProtocol: false,
      http2: true,
      http2Cleartext: false,
    });
    const set = readSettings({
      BULWARK_POD_NAME: "g-0",
      BULWARK_CLIENT_HEADER_TIMEOUT_SECONDS: "5",
      BULWARK_CLIENT_BODY_TIMEOUT_SECONDS: "7",
      BULWARK_MAX_REQUEST_HEAD_BYTES: "4096",
      BULWARK_MAX_REQUEST_TARGET_BYTES: "1024",
      BULWARK_MAX_FIELD_LINE_BYTES: "2048",
      BULWARK_UNDERSCORES_IN_HEADERS: "on",
      BULWARK_TRUSTED_PROXIES: " 10.0.0.7/8, 2001:db8::/32,192.0.2.1",
      BULWARK_PROXY_PROTOCOL: "true",
      BULWARK_HTTP2: "false",
      BULWARK_HTTP2_CLEARTEXT: "true",
    });
    assert.ok(set.ok);
    assert.deepEqual(set.settings.frontDoor, {
      headTimeoutMs: 5000,
      bodyTimeoutMs: 7000,
      maxHeadBytes: 4096,
      maxTargetBytes: 1024,
      maxFieldBytes: 2048,
      underscoresInHeaders: true,
      trustedProxies: ["10.0.0.0/8", "192.0.2.1", "2001:db8::/32"],
      proxyProtocol: true,
      http2: false,
      http2Cleartext: true,
    });
  });

  const bad: [string, NodeJS.ProcessEnv, RegExp][] = [
    ["no pod name", {}, /^BULWARK_POD_NAME is required \(the pod name, from the Downward API\)$/],
    [
      "a trusted proxy that is not a network",
      { BULWARK_POD_NAME: "g-0", BULWARK_TRUSTED_PROXIES: "10.0.0.0/8,lb.example.com" },
      /^BULWARK_TRUSTED_PROXIES: "lb.example.com" is neither an IP address nor a CIDR$/,
    ],
    [
      "a pod name without ordinal",
      { BULWARK_POD_NAME: "gateway" },
      /^BULWARK_POD_NAME must end in -<ordinal>/,
    ],
    [
      "a port out of range",
      { BULWARK_POD_NAME: "g-0", BULWARK_HTTP_PORT: "70000" },
      /^BULWARK_HTTP_PORT must be an integer from 0 to 65535; got "70000"$/,
    ],
    [
      "a bad flag",
      { BULWARK_POD_NAME: "g-0", BULWARK_ACCESS_LOG: "maybe" },
      /^BULWARK_ACCESS_LOG must be true or false/,
    ],
    [
      "a bad namespace",
      { BULWARK_POD_NAME: "g-0", BULWARK_WATCH_NAMESPACES: "Shop" },
      /^BULWARK_WATCH_NAMESPACES: "Shop" is not a namespace name$/,
    ],
    [
      "zero workers",
      { BULWARK_POD_NAME: "g-0", BULWARK_WORKERS: "0" },
      /^BULWARK_WORKERS must be an integer from 1 to 64/,
    ],
    [
      "a canary cap of 0",
      { BULWARK_POD_NAME: "g-0", BULWARK_MAX_CANARIES: "0" },
      /^BULWARK_MAX_CANARIES must be an integer from 1 to 200; got "0"$/,
    ],
    [
      "a head timeout of 0",
      { BULWARK_POD_NAME: "g-0", BULWARK_CLIENT_HEADER_TIMEOUT_SECONDS: "0" },
      /^BULWARK_CLIENT_HEADER_TIMEOUT_SECONDS must be an integer from 1 to 3600; got "0"$/,
    ],
    [
      "a head limit in kilobytes",
      { BULWARK_POD_NAME: "g-0", BULWARK_MAX_REQUEST_HEAD_BYTES: "64k" },
      /^BULWARK_MAX_REQUEST_HEAD_BYTES must be an integer from 1024 to 1048576; got "64k"$/,
    ],
    [
      "a bad underscores flag",
      { BULWARK_POD_NAME: "g-0", BULWARK_UNDERSCORES_IN_HEADERS: "yes please" },
      /^BULWARK_UNDERSCORES_IN_HEADERS must be true or false/,
    ],
    [
      "an unknown canary match",
      { BULWARK_POD_NAME: "g-0", BULWARK_CANARY_MATCH: "fuzzy" },
      /^BULWARK_CANARY_MATCH must be exact \(ingress-nginx\) or case-insensitive/,
    ],
  ];
  for (const [title, env, message] of bad) {
    it(`given ${title}, names the setting`, () => {
      const result = readSettings(env);
      assert.equal(result.ok, false);
      if (!result.ok) assert.match(result.message, message);
    });
  }
});
