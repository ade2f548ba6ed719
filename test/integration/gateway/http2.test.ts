// HTTP/2 through the gateway process and the real API server: an Ingress with a TLS Secret is
// served over h2 (ALPN) with the Secret's certificate, its canary by header works on an h2
// stream, and an Ingress with bulwark.dev/http2: "false" keeps its host on HTTP/1.1.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import { connect as connectTls } from "node:tls";
import { applyOrThrow } from "../../../hack/control-plane/kube";
import { waitUntil } from "../../harness/wait";
import { makeCertificate, tlsSecret } from "../../fixtures/certificates";
import { testCluster, testNamespace } from "../../harness/cluster";
import { askH2, negotiated } from "../../../gateway/proxy/h2/testkit";
import {
  endpointSlice,
  ensureIngressClass,
  ingress,
  startBackend,
  startGateway,
  type Backend,
  type RunningGateway,
} from "./harness";

const cluster = testCluster();
const HOST = "h2.example.com";
const OLD_HOST = "old.example.com";
const P = "nginx.ingress.kubernetes.io/";

/** The certificate the listener gives a client asking for `servername`. */
function servedFingerprint(port: number, servername: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connectTls(
      { host: "127.0.0.1", port, servername, rejectUnauthorized: false, ALPNProtocols: ["h2"] },
      () => {
        resolve(socket.getPeerX509Certificate()?.fingerprint256 ?? "");
        socket.destroy();
      },
    );
    socket.on("error", reject);
  });
}

describe("gateway HTTP/2", () => {
  let ns: string;
  let removeNamespace: () => Promise<void>;
  let stable: Backend;
  let canary: Backend;
  let gateway: RunningGateway;
  const certificate = makeCertificate({ key: "ecdsa", dnsNames: [HOST, OLD_HOST] });

  before(async () => {
    [ns, removeNamespace] = await testNamespace(cluster, "gw-h2");
    await ensureIngressClass(cluster.kc);
    [stable, canary] = [await startBackend("stable"), await startBackend("canary")];
    await applyOrThrow(cluster.kc, [
      tlsSecret(ns, "h2-tls", certificate),
      endpointSlice(ns, "stable", stable.port),
      endpointSlice(ns, "canary", canary.port),
      ingress(ns, "h2", { host: HOST, service: "stable", tlsSecrets: ["h2-tls"] }),
      ingress(ns, "h2-canary", {
        host: HOST,
        service: "canary",
        annotations: { [`${P}canary`]: "true", [`${P}canary-by-header`]: "X-Canary" },
      }),
      ingress(ns, "old", {
        host: OLD_HOST,
        service: "stable",
        tlsSecrets: ["h2-tls"],
        annotations: { "bulwark.dev/http2": "false" },
      }),
    ]);
    gateway = await startGateway({ kubeconfigPath: cluster.kubeconfigPath, namespace: ns });
    await waitUntil("the Secret's certificate to be served", async () => {
      const served = await servedFingerprint(gateway.httpsPort, HOST);
      return served === new X509Certificate(certificate.certPem).fingerprint256;
    });
  });

  after(async () => {
    await gateway?.stop();
    await Promise.all([stable?.close(), canary?.close()]);
    await removeNamespace?.();
  });

  it("serves the Ingress's host over h2 with its Secret's certificate", async () => {
    assert.equal(await negotiated(gateway.httpsPort, HOST, ["h2", "http/1.1"]), "h2");
    const answer = await waitUntil("the h2 route", async () => {
      const reply = await askH2(gateway.httpsPort, HOST, "/x");
      return reply.status === 200 && reply.body.startsWith("stable") ? reply : undefined;
    });
    assert.equal(answer.body, "stable /x");
  });

  it("sends an h2 stream with the canary header to the canary", async () => {
    const answer = await waitUntil("the canary over h2", async () => {
      const reply = await askH2(gateway.httpsPort, HOST, "/c", {
        headers: { "x-canary": "always" },
      });
      return reply.body.startsWith("canary") ? reply : undefined;
    });
    assert.equal(answer.body, "canary /c");
    const never = await askH2(gateway.httpsPort, HOST, "/c", { headers: { "x-canary": "never" } });
    assert.equal(never.body, "stable /c");
  });

  it("keeps a host whose Ingress says bulwark.dev/http2: false on HTTP/1.1", async () => {
    await waitUntil(
      "old.example.com offered http/1.1 only",
      async () =>
        (await negotiated(gateway.httpsPort, OLD_HOST, ["h2", "http/1.1"])) === "http/1.1",
    );
    assert.equal(await negotiated(gateway.httpsPort, HOST, ["h2", "http/1.1"]), "h2");
  });
});
