// The kubelet check over HTTPS against a real TLS server standing in for the kubelet (no kubelet
// runs here): certificates made by openssl (hack/control-plane/pki.ts), the plugin built from
// the flag a DaemonSet would pass, so the test also shows each key of --check-kubelet is used.
// The stand-in answers as a kubelet with anonymous auth off: 200 for a known bearer token or a
// client certificate from its client CA, 403 for a token it knows but has not authorised, else 401.
import assert from "node:assert/strict";
import { mkdtempSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import https from "node:https";
import type { AddressInfo } from "node:net";
import type { TLSSocket } from "node:tls";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { createPki, issueCertificate, type Pki } from "../hack/control-plane/pki";
import { makeProber } from "./checks";
import { describeChecks } from "./main";
import { parseSettings, type CheckPlugin } from "./settings";

const dir = mkdtempSync(join(tmpdir(), "edge-kubelet-tls-"));
const pkiIn = (name: string): Pki => {
  const d = join(dir, name);
  mkdirSync(d);
  return createPki(d);
};

/** The kubelet plugin exactly as `--check-kubelet=<value>` configures it. */
function kubeletPlugin(value: string): CheckPlugin {
  const parsed = parseSettings([`--check-kubelet=${value}`], { BULWARK_NODE_NAME: "edge-1" });
  if (parsed.kind !== "ok") throw new Error(JSON.stringify(parsed));
  const plugin = parsed.settings.checks.find(c => c.kind === "kubelet");
  if (!plugin) throw new Error("no kubelet check");
  return plugin;
}

async function probe(value: string) {
  const prober = makeProber([kubeletPlugin(value)], () => "127.0.0.1");
  try {
    const [outcome] = await prober.probe("127.0.0.1");
    return outcome;
  } finally {
    prober.close();
  }
}

describe("kubelet check over HTTPS", () => {
  let cluster: Pki;
  let other: Pki;
  const files = { token: "", noRbacToken: "", wrongToken: "" };
  const servers: https.Server[] = [];
  const seen: { auth?: string; clientCn?: string; path?: string }[] = [];
  /** Stand-in kubelets by what they serve. */
  const ports = { good: 0, otherCa: 0, wrongSan: 0, selfSigned: 0 };

  const kubelet = async (cert: { certPath: string; keyPath: string }): Promise<number> => {
    const server = https.createServer(
      {
        cert: readFileSync(cert.certPath),
        key: readFileSync(cert.keyPath),
        ca: cluster.caPem,
        requestCert: true,
        rejectUnauthorized: false,
      },
      (req, res) => {
        const socket = req.socket as TLSSocket;
        const clientCn = socket.authorized
          ? String(socket.getPeerCertificate().subject.CN)
          : undefined;
        seen.push({ auth: req.headers.authorization, clientCn, path: req.url });
        const auth = req.headers.authorization;
        if (clientCn !== undefined || auth === "Bearer sa-token") res.statusCode = 200;
        else if (auth === "Bearer no-rbac-token") res.statusCode = 403;
        else res.statusCode = 401;
        res.end(res.statusCode === 200 ? "ok" : "");
      },
    );
    servers.push(server);
    await new Promise<void>(r => server.listen(0, "127.0.0.1", r));
    return (server.address() as AddressInfo).port;
  };

  before(async () => {
    cluster = pkiIn("cluster");
    other = pkiIn("other");
    const self = pkiIn("self-signed");
    const serving = (pki: Pki, name: string, san: string) =>
      issueCertificate(pki, {
        name,
        commonName: "edge-1",
        subjectAltNames: [san],
        usage: "serverAuth",
      });
    ports.good = await kubelet(serving(cluster, "kubelet", "IP:127.0.0.1"));
    ports.otherCa = await kubelet(serving(other, "kubelet-other", "IP:127.0.0.1"));
    ports.wrongSan = await kubelet(serving(cluster, "kubelet-wrong-san", "IP:127.0.0.2"));
    // kubeadm's default: the kubelet's own self-signed certificate.
    ports.selfSigned = await kubelet({
      certPath: self.caCertPath,
      keyPath: self.caKeyPath,
    });
    for (const [name, token] of [
      ["token", "sa-token"],
      ["noRbacToken", "no-rbac-token"],
      ["wrongToken", "someone-else"],
    ] as const) {
      files[name] = join(dir, name);
      writeFileSync(files[name], `${token}\n`);
    }
  });
  after(() => servers.forEach(s => s.close()));

  const ca = () => `ca-file=${cluster.caCertPath}`;

  it("healthy kubelet, verified CA, service-account token: normal, and the token and path arrive", async () => {
    const outcome = await probe(`port=${ports.good},${ca()},token-file=${files.token}`);
    assert.equal(outcome?.ok, true, outcome?.error);
    assert.deepEqual(seen.at(-1), {
      auth: "Bearer sa-token",
      clientCn: undefined,
      path: "/healthz",
    });
  });

  it("401 (token refused): abnormal, with the reason", async () => {
    const outcome = await probe(`port=${ports.good},${ca()},token-file=${files.wrongToken}`);
    assert.equal(outcome?.ok, false);
    assert.match(outcome?.error ?? "", /^HTTP 401: the kubelet refused the credentials/);
  });

  it("403 (authenticated, not authorised): abnormal, naming the RBAC it needs", async () => {
    const outcome = await probe(`port=${ports.good},${ca()},token-file=${files.noRbacToken}`);
    assert.equal(outcome?.ok, false);
    assert.match(outcome?.error ?? "", /^HTTP 403: .*nodes\/healthz.*nodes\/proxy/);
  });

  it("a certificate from another CA: abnormal, a TLS failure (never sends the token)", async () => {
    const before = seen.length;
    const outcome = await probe(`port=${ports.otherCa},${ca()},token-file=${files.token}`);
    assert.equal(outcome?.ok, false);
    assert.match(outcome?.error ?? "", /^TLS: UNABLE_TO_VERIFY_LEAF_SIGNATURE/);
    assert.equal(seen.length, before, "no request reached the server");
  });

  it("a certificate for another address: abnormal, a TLS failure", async () => {
    const outcome = await probe(`port=${ports.wrongSan},${ca()},token-file=${files.token}`);
    assert.equal(outcome?.ok, false);
    assert.match(outcome?.error ?? "", /^TLS: ERR_TLS_CERT_ALTNAME_INVALID/);
  });

  it("a self-signed kubelet certificate with ca-file set: abnormal (TLS)", async () => {
    const outcome = await probe(`port=${ports.selfSigned},${ca()},token-file=${files.token}`);
    assert.match(outcome?.error ?? "", /^TLS: /);
  });

  it("a self-signed kubelet certificate without ca-file: normal (not verified, and said so at start-up)", async () => {
    const value = `port=${ports.selfSigned},token-file=${files.token}`;
    const outcome = await probe(value);
    assert.equal(outcome?.ok, true, outcome?.error);
    const parsed = parseSettings([`--check-kubelet=${value}`], { BULWARK_NODE_NAME: "e" });
    assert.ok(parsed.kind === "ok");
    assert.equal(describeChecks(parsed.settings)[1]?.tls, "not verified (no ca-file)");
  });

  it("a client certificate instead of a token: normal, and the kubelet sees the certificate's name", async () => {
    const client = issueCertificate(cluster, {
      name: "edge-client",
      commonName: "system:node-health:edge-1",
      usage: "clientAuth",
    });
    const outcome = await probe(
      `port=${ports.good},${ca()},token-file=none,cert-file=${client.certPath},key-file=${client.keyPath}`,
    );
    assert.equal(outcome?.ok, true, outcome?.error);
    assert.deepEqual(seen.at(-1), {
      auth: undefined,
      clientCn: "system:node-health:edge-1",
      path: "/healthz",
    });
  });

  it("no token and no certificate: 401, abnormal", async () => {
    const outcome = await probe(`port=${ports.good},${ca()},token-file=none`);
    assert.match(outcome?.error ?? "", /^HTTP 401/);
  });

  it("a file that cannot be read stops start-up, naming the setting and key", () => {
    for (const [key, value] of [
      ["ca-file", `ca-file=${join(dir, "nope.crt")},token-file=${files.token}`],
      ["token-file", `token-file=${join(dir, "nope.token")}`],
    ] as const) {
      assert.throws(
        () => makeProber([kubeletPlugin(value)], () => undefined),
        new RegExp(
          `^Error: BULWARK_EDGE_CHECK_KUBELET \\(--check-kubelet\\) ${key}: cannot read .* \\(ENOENT\\)$`,
        ),
      );
    }
  });
});
