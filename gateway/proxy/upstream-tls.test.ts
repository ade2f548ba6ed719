import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startDataPlane, type DataPlane } from "../data-plane";
import { ingress, view } from "../routing/testkit";
import type { TlsPair } from "../view";
import { issueCertificate, makeCa } from "../../test/fixtures/certificates";
import {
  ask,
  namedBackend,
  startHttpsBackend,
  type Answer,
  type Backend,
  loopback,
} from "./testkit";

const P = "nginx.ingress.kubernetes.io/";
const NS = "default";

const https = (extra: Record<string, string>) => ({ [`${P}backend-protocol`]: "HTTPS", ...extra });
const verified = (secret: string, name = "backend.test") =>
  https({
    [`${P}proxy-ssl-secret`]: `${NS}/${secret}`,
    [`${P}proxy-ssl-verify`]: "on",
    [`${P}proxy-ssl-name`]: name,
  });

// A Connection option naming another header sends the request down Node's HTTP path.
const PATHS: [string, Record<string, string>][] = [
  ["the fast path", {}],
  ["Node's path", { connection: "x-node", "x-node": "1" }],
];

describe("data plane: HTTPS upstreams (backend-protocol, proxy-ssl-*)", () => {
  let plane: DataPlane;
  let problems: string[] = [];
  const backends: Backend[] = [];
  const serverCa = makeCa("server-ca");
  const otherCa = makeCa("other-ca");
  const clientCa = makeCa("client-ca");
  const serverCert = issueCertificate(serverCa, ["backend.test"]);
  const clientCert = issueCertificate(clientCa, ["gateway-client"]);
  const pair = (
    name: string,
    fields: Omit<TlsPair, "namespace" | "name" | "cert" | "key"> & Partial<TlsPair>,
  ): TlsPair => ({
    namespace: NS,
    name,
    cert: "",
    key: "",
    ...fields,
  });

  before(async () => {
    const tls = { cert: serverCert.certPem, key: serverCert.keyPem };
    const secure = await startHttpsBackend("secure", tls);
    const mutual = await startHttpsBackend("mutual", { ...tls, clientCa: clientCa.certPem });
    const plain = await namedBackend("plain");
    backends.push(secure, mutual, plain);
    plane = await startDataPlane({ httpPort: 0, host: "127.0.0.1", defaultCertificates: [] });
    const rule = (host: string, service: string) => ({ host, paths: [{ path: "/", service }] });
    const ingresses = [
      ingress({
        name: "ok",
        annotations: verified("server-ca"),
        rules: [rule("verify-ok.test", "secure")],
      }),
      ingress({
        name: "wrong-ca",
        annotations: verified("other-ca"),
        rules: [rule("wrong-ca.test", "secure")],
      }),
      ingress({
        name: "wrong-name",
        annotations: verified("server-ca", "other.test"),
        rules: [rule("wrong-name.test", "secure")],
      }),
      ingress({ name: "off", annotations: https({}), rules: [rule("verify-off.test", "secure")] }),
      ingress({
        name: "mtls",
        annotations: verified("client"),
        rules: [rule("mtls.test", "mutual")],
      }),
      ingress({
        name: "no-client-cert",
        annotations: verified("server-ca"),
        rules: [rule("no-client-cert.test", "mutual")],
      }),
      ingress({
        name: "missing",
        annotations: verified("absent"),
        rules: [rule("missing.test", "secure")],
      }),
      ingress({ name: "plain-to-tls", rules: [rule("plain-to-tls.test", "secure")] }),
      ingress({
        name: "auto",
        annotations: { [`${P}backend-protocol`]: "AUTO_HTTP" },
        rules: [rule("auto.test", "plain")],
      }),
      ingress({
        name: "vhost",
        annotations: {
          [`${P}upstream-vhost`]: "inner.test",
          [`${P}rewrite-target`]: "/",
          [`${P}x-forwarded-prefix`]: "/outer",
        },
        rules: [rule("vhost.test", "plain")],
      }),
    ];
    const pairs = [
      pair("server-ca", { ca: serverCa.certPem }),
      pair("other-ca", { ca: otherCa.certPem }),
      pair("client", { cert: clientCert.certPem, key: clientCert.keyPem, ca: serverCa.certPem }),
    ];
    const slices = [
      loopback("secure", secure.port),
      loopback("mutual", mutual.port),
      loopback("plain", plain.port),
    ];
    problems = (await plane.apply(view(1, ingresses, slices, pairs))).problems;
  });

  after(async () => {
    await plane.close({ drainMs: 0 });
    await Promise.all(backends.map(b => b.close()));
  });

  const get = (host: string, headers: Record<string, string>): Promise<Answer> =>
    ask(plane.httpPort, host, "/", { headers });
  const body = (answer: Answer) =>
    JSON.parse(answer.body) as { name: string; client: string; headers: Record<string, string> };

  for (const [path, headers] of PATHS) {
    describe(path, () => {
      it("verifies the backend against ca.crt and proxy-ssl-name: 200", async () => {
        const answer = await get("verify-ok.test", headers);
        assert.equal(answer.status, 200);
        assert.equal(body(answer).name, "secure");
      });

      it("answers 502 when the backend's certificate is not signed by ca.crt", async () => {
        assert.equal((await get("wrong-ca.test", headers)).status, 502);
      });

      it("answers 502 when the certificate does not name proxy-ssl-name", async () => {
        assert.equal((await get("wrong-name.test", headers)).status, 502);
      });

      it("connects without verifying when proxy-ssl-verify is off (nginx's default): 200", async () => {
        assert.equal((await get("verify-off.test", headers)).status, 200);
      });

      it("shows tls.crt as client certificate to a backend that requires one", async () => {
        const answer = await get("mtls.test", headers);
        assert.equal(answer.status, 200);
        assert.equal(body(answer).client, "gateway-client");
      });

      it("answers 502 when the backend requires a client certificate and none is configured", async () => {
        assert.equal((await get("no-client-cert.test", headers)).status, 502);
      });

      it("answers 503 while the proxy-ssl-secret does not exist (fail closed)", async () => {
        assert.equal((await get("missing.test", headers)).status, 503);
      });

      it("speaks plain HTTP without backend-protocol (an HTTPS backend fails: 502)", async () => {
        assert.equal((await get("plain-to-tls.test", headers)).status, 502);
      });

      it("AUTO_HTTP speaks plain HTTP to the backend for a plain-HTTP request", async () => {
        const answer = await get("auto.test", headers);
        assert.equal(answer.status, 200);
        assert.equal(body(answer).name, "plain");
      });

      it("sends upstream-vhost as Host and x-forwarded-prefix with a rewrite-target", async () => {
        const answer = await get("vhost.test", headers);
        assert.equal(answer.status, 200);
        assert.equal(body(answer).headers.host, "inner.test");
        assert.equal(body(answer).headers["x-forwarded-prefix"], "/outer");
      });
    });
  }

  it("reports the missing Secret as a problem naming it", () => {
    const named = problems.filter(
      p => p.includes("proxy-ssl-secret") && p.includes("default/absent"),
    );
    assert.equal(named.length, 1, problems.join(" | "));
  });
});
