// HTTPS through the gateway process: SNI picks the host's certificates; with an ECDSA and an RSA
// certificate on one host the handshake gives each client the one it can use; a rotated
// certificate applies to new handshakes while an open connection keeps working.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import type { TLSSocket } from "node:tls";
import { applyOrThrow } from "../../../hack/control-plane/kube";
import { waitUntil } from "../../harness/wait";
import { makeCertificate, tlsSecret } from "../../fixtures/certificates";
import { testCluster, testNamespace } from "../../harness/cluster";
import {
  endpointSlice,
  ensureIngressClass,
  getOver,
  handshake,
  ingress,
  keyType,
  peerFingerprint,
  startBackend,
  startGateway,
  type Backend,
  type RunningGateway,
} from "./harness";

const cluster = testCluster();
const HOST = "secure.example.com";

function fingerprint(pem: string): string {
  return new X509Certificate(pem).fingerprint256;
}

describe("gateway TLS", () => {
  let ns: string;
  let removeNamespace: () => Promise<void>;
  let backend: Backend;
  let gateway: RunningGateway;
  const ecc = makeCertificate({ key: "ecdsa", dnsNames: [HOST] });
  const rsa = makeCertificate({ key: "rsa", dnsNames: [HOST] });

  before(async () => {
    [ns, removeNamespace] = await testNamespace(cluster, "gw-tls");
    await ensureIngressClass(cluster.kc);
    backend = await startBackend("secure");
    await applyOrThrow(cluster.kc, [
      tlsSecret(ns, "secure-ecc-1", ecc),
      tlsSecret(ns, "secure-rsa-2", rsa),
      endpointSlice(ns, "secure", backend.port),
      ingress(ns, "secure-3", {
        host: HOST,
        service: "secure",
        tlsSecrets: ["secure-ecc-1", "secure-rsa-2"],
      }),
    ]);
    gateway = await startGateway({ kubeconfigPath: cluster.kubeconfigPath, namespace: ns });
    await waitUntil(
      "both certificates to be served",
      async () => (await gateway.health()).view?.tlsPairs === 2,
    );
  });

  after(async () => {
    await gateway?.stop();
    await backend?.close();
    await removeNamespace?.();
  });

  it("gives a client offering only ECDSA the ECDSA certificate, and one offering only RSA the RSA one", async () => {
    const sockets: TLSSocket[] = [];
    try {
      const ec = await handshake(gateway.httpsPort, HOST, "ecdsa");
      sockets.push(ec);
      const rs = await handshake(gateway.httpsPort, HOST, "rsa");
      sockets.push(rs);
      assert.equal(keyType(ec), "ec");
      assert.equal(peerFingerprint(ec), fingerprint(ecc.certPem));
      assert.equal(keyType(rs), "rsa");
      assert.equal(peerFingerprint(rs), fingerprint(rsa.certPem));
      assert.deepEqual(await getOver(ec, HOST), { status: 200, body: "secure /" });
      assert.deepEqual(await getOver(rs, HOST, "/x"), { status: 200, body: "secure /x" });
    } finally {
      for (const socket of sockets) socket.destroy();
    }
  });

  it("rotates a certificate live: new handshakes get the new one, an open connection keeps working", async () => {
    const open = await handshake(gateway.httpsPort, HOST, "rsa");
    try {
      assert.equal((await getOver(open, HOST)).status, 200);
      const renewed = makeCertificate({ key: "rsa", dnsNames: [HOST] });
      await applyOrThrow(cluster.kc, [tlsSecret(ns, "secure-rsa-2", renewed)]);
      await waitUntil("the renewed certificate on new handshakes", async () => {
        const fresh = await handshake(gateway.httpsPort, HOST, "rsa");
        const served = peerFingerprint(fresh);
        fresh.destroy();
        return served === fingerprint(renewed.certPem);
      });
      assert.equal(peerFingerprint(open), fingerprint(rsa.certPem));
      assert.deepEqual(await getOver(open, HOST, "/after"), { status: 200, body: "secure /after" });
      assert.equal(open.destroyed, false);
    } finally {
      open.destroy();
    }
  });
});
