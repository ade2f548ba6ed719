import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { annotationPath } from "./family";
import { parseUpstream, type UpstreamConfig } from "./upstream";
import { annotationKey } from "./validators";

const key = annotationKey;

const PLAIN: UpstreamConfig = {
  protocol: "HTTP",
  ssl: {
    secret: undefined,
    verify: false,
    verifyDepth: 1,
    name: undefined,
    serverName: false,
    protocols: ["TLSv1.2", "TLSv1.3"],
    ciphers: undefined,
  },
  vhost: undefined,
  forwardedPrefix: undefined,
};

describe("parseUpstream, valid (ingress-nginx's documented examples)", () => {
  const cases: [string, Record<string, string>, UpstreamConfig | undefined][] = [
    ["no upstream annotation", {}, undefined],
    [
      'backend-protocol "HTTPS"',
      { [key("backend-protocol")]: "HTTPS" },
      { ...PLAIN, protocol: "HTTPS" },
    ],
    [
      "backend-protocol in another case, with spaces (ValidateOptions lowers and trims)",
      { [key("backend-protocol")]: " https " },
      { ...PLAIN, protocol: "HTTPS" },
    ],
    [
      'backend-protocol "auto_http"',
      { [key("backend-protocol")]: "auto_http" },
      { ...PLAIN, protocol: "AUTO_HTTP" },
    ],
    [
      "every proxy-ssl annotation",
      {
        [key("backend-protocol")]: "HTTPS",
        [key("proxy-ssl-secret")]: "default/backend-client",
        [key("proxy-ssl-verify")]: "on",
        [key("proxy-ssl-verify-depth")]: "2",
        [key("proxy-ssl-name")]: "Backend.Default.svc",
        [key("proxy-ssl-server-name")]: "on",
        [key("proxy-ssl-protocols")]: "TLSv1.3 TLSv1.2",
        [key("proxy-ssl-ciphers")]: "ECDHE-RSA-AES128-GCM-SHA256:!aNULL",
      },
      {
        ...PLAIN,
        protocol: "HTTPS",
        ssl: {
          secret: { namespace: "default", name: "backend-client" },
          verify: true,
          verifyDepth: 2,
          name: "backend.default.svc",
          serverName: true,
          protocols: ["TLSv1.2", "TLSv1.3"],
          ciphers: "ECDHE-RSA-AES128-GCM-SHA256:!aNULL",
        },
      },
    ],
    [
      "TLSv1.3 alone, verify off",
      {
        [key("backend-protocol")]: "HTTPS",
        [key("proxy-ssl-protocols")]: "TLSv1.3",
        [key("proxy-ssl-verify")]: "off",
      },
      { ...PLAIN, protocol: "HTTPS", ssl: { ...PLAIN.ssl, protocols: ["TLSv1.3"] } },
    ],
    [
      "GRPC (h2c), any case",
      { [key("backend-protocol")]: " grpc " },
      { ...PLAIN, protocol: "GRPC" },
    ],
    [
      "GRPCS with proxy-ssl-verify off",
      { [key("backend-protocol")]: "GRPCS", [key("proxy-ssl-verify")]: "off" },
      { ...PLAIN, protocol: "GRPCS" },
    ],
    [
      "upstream-vhost and x-forwarded-prefix",
      {
        [key("upstream-vhost")]: "upstreamvhost.bar.com",
        [key("x-forwarded-prefix")]: "/test/value",
      },
      { ...PLAIN, vhost: "upstreamvhost.bar.com", forwardedPrefix: "/test/value" },
    ],
    [
      "an empty x-forwarded-prefix (no header, as ingress-nginx)",
      { [key("x-forwarded-prefix")]: "" },
      PLAIN,
    ],
  ];
  for (const [title, annotations, expected] of cases) {
    it(`given ${title}, returns its config`, () => {
      const result = parseUpstream(annotations);
      assert.equal(result.ok, true, JSON.stringify(result));
      if (result.ok) assert.deepEqual(result.value, expected);
    });
  }
});

describe("parseUpstream, malformed", () => {
  const protocol = `expected "HTTP", "HTTPS", "AUTO_HTTP", "GRPC" or "GRPCS"`;
  const onOff = `expected "on" or "off"`;
  const versions = `expected "TLSv1.2" and/or "TLSv1.3" separated by spaces`;
  const cases: [string, string, string][] = [
    ["backend-protocol", "GRPC-WEB", `${protocol}, got "GRPC-WEB"`],
    ["backend-protocol", "FCGI", `${protocol}, got "FCGI" (FastCGI backends are not supported)`],
    ["backend-protocol", "HTTP2", `${protocol}, got "HTTP2"`],
    ["backend-protocol", "", `${protocol}, got ""`],
    [
      "proxy-ssl-secret",
      "backend-client",
      `expected a Secret as "namespace/name", got "backend-client"`,
    ],
    ["proxy-ssl-secret", "a/b/c", `expected a Secret as "namespace/name", got "a/b/c"`],
    ["proxy-ssl-secret", "Default/x", `expected a Secret as "namespace/name", got "Default/x"`],
    ["proxy-ssl-secret", "default/", `expected a Secret as "namespace/name", got "default/"`],
    ["proxy-ssl-verify", "true", `${onOff}, got "true"`],
    ["proxy-ssl-verify", "ON", `${onOff}, got "ON"`],
    ["proxy-ssl-server-name", "yes", `${onOff}, got "yes"`],
    ["proxy-ssl-verify-depth", "0", `expected an integer between 1 and 100, got "0"`],
    ["proxy-ssl-verify-depth", "two", `expected an integer between 1 and 100, got "two"`],
    [
      "proxy-ssl-name",
      "$host",
      `expected a host name, got "$host" (nginx variables are not supported)`,
    ],
    ["proxy-ssl-name", "a b", `expected a host name, got "a b"`],
    ["proxy-ssl-protocols", "TLSv1.1 TLSv1.2", `${versions}, got "TLSv1.1 TLSv1.2" ("TLSv1.1")`],
    ["proxy-ssl-protocols", "SSLv3", `${versions}, got "SSLv3" ("SSLv3")`],
    ["proxy-ssl-protocols", " ", `${versions}, got " "`],
    [
      "proxy-ssl-ciphers",
      "HIGH;rm -rf",
      `expected an OpenSSL cipher list, got "HIGH;rm -rf" (letters, digits, "+:_-!" only)`,
    ],
    [
      "proxy-ssl-ciphers",
      "NO-SUCH-CIPHER",
      `expected an OpenSSL cipher list, got "NO-SUCH-CIPHER" (names no cipher Node's OpenSSL has)`,
    ],
    [
      "upstream-vhost",
      "bar.com\r\nX-Evil: 1",
      `expected a host name, got "bar.com\\r\\nX-Evil: 1"`,
    ],
    ["upstream-vhost", "", `expected a host name, got ""`],
    [
      "x-forwarded-prefix",
      "/$1",
      `expected a path of letters, digits and "-._~/:", got "/$1" (captured groups ($1) are not supported)`,
    ],
    ["x-forwarded-prefix", "/a b", `expected a path of letters, digits and "-._~/:", got "/a b"`],
  ];
  for (const [name, raw, message] of cases) {
    it(`given ${name}: ${JSON.stringify(raw)}, returns an error naming its key`, () => {
      assert.deepEqual(parseUpstream({ [key(name)]: raw }), {
        ok: false,
        errors: [{ field: annotationPath(key(name)), message }],
        warnings: [],
      });
    });
  }

  it("refuses proxy-ssl-verify on and proxy-ssl-server-name on without proxy-ssl-name", () => {
    const result = parseUpstream({
      [key("backend-protocol")]: "HTTPS",
      [key("proxy-ssl-verify")]: "on",
      [key("proxy-ssl-server-name")]: "on",
    });
    const name = key("proxy-ssl-name");
    assert.deepEqual(result, {
      ok: false,
      errors: [
        {
          field: annotationPath(key("proxy-ssl-verify")),
          message: `"on" needs ${name}, the name the backend's certificate must carry`,
        },
        {
          field: annotationPath(key("proxy-ssl-server-name")),
          message: `"on" needs ${name}, the name to send as the TLS server name`,
        },
      ],
      warnings: [],
    });
  });
});

describe("parseUpstream, warnings", () => {
  it("warns that proxy-ssl-* does nothing while backend-protocol is HTTP", () => {
    const result = parseUpstream({ [key("proxy-ssl-secret")]: "default/client" });
    assert.deepEqual(result.warnings, [
      `${key("proxy-ssl-secret")} has no effect while ${key("backend-protocol")} is "HTTP"`,
    ]);
  });
});
