// Upstream TLS end to end: the real API server admits (or refuses) backend-protocol HTTPS with
// proxy-ssl-* through the Pepr module, and a real gateway process reaches an HTTPS backend,
// verifying its certificate against the ca.crt of the proxy-ssl-secret and the proxy-ssl-name.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { KubernetesObjectApi } from "@kubernetes/client-node";
import { endpointSlice, ingress, localAddress } from "../gateway/harness";
import { rejection, testCluster } from "../../harness/cluster";
import { issueCertificate, makeCa, tlsSecret } from "../../fixtures/certificates";
import { startHttpsBackend, type Backend } from "../../../gateway/proxy/testkit";
import {
  nginx,
  openGateway,
  openNamespace,
  type TrafficGateway,
  type TrafficNamespace,
} from "./helpers";

describe("upstream TLS end to end", () => {
  let space: TrafficNamespace;
  let served: TrafficGateway;
  let secure: Backend;
  const serverCa = makeCa("backend-ca");

  before(async () => {
    space = await openNamespace("traffic-upstream-tls", ["web"]);
    const ns = space.ns;
    const serverCert = issueCertificate(serverCa, ["backend.test"]);
    secure = await startHttpsBackend(
      "secure",
      { cert: serverCert.certPem, key: serverCert.keyPem },
      localAddress(),
    );
    // The client pair the gateway would show; ca.crt is what the backend is verified against.
    const pair = tlsSecret(ns, "backend-ca", issueCertificate(makeCa("client-ca"), ["gateway"]));
    const ca = Buffer.from(serverCa.certPem).toString("base64");
    const secret = { ...pair, data: { ...pair.data, "ca.crt": ca } };
    const https = (name: string) =>
      nginx({
        "backend-protocol": "HTTPS",
        "proxy-ssl-secret": `${ns}/backend-ca`,
        "proxy-ssl-verify": "on",
        "proxy-ssl-name": name,
      });
    await space.apply([
      secret,
      endpointSlice(ns, "secure", secure.port),
      ingress(ns, "ready", { host: "ready.test", service: "web" }),
      ingress(ns, "verified", {
        host: "verified.test",
        service: "secure",
        annotations: https("backend.test"),
      }),
      ingress(ns, "misnamed", {
        host: "misnamed.test",
        service: "secure",
        annotations: https("other.test"),
      }),
    ]);
    served = await openGateway(ns, {}, { host: "ready.test", backend: "web" });
  });

  after(async () => {
    await served?.close();
    await secure?.close();
    await space?.close();
  });

  it("reaches the HTTPS backend, its certificate verified against the Secret's ca.crt", async () => {
    const answer = await served.client.send("verified.test", "/");
    assert.equal(answer.status, 200);
    assert.equal((JSON.parse(answer.body) as { name: string }).name, "secure");
  });

  it("answers 502 when the certificate does not name proxy-ssl-name", async () => {
    assert.equal((await served.client.send("misnamed.test", "/")).status, 502);
  });

  it("refuses proxy-ssl-verify on without proxy-ssl-name at admission, naming the key", async () => {
    const objects = KubernetesObjectApi.makeApiClient(testCluster().kc);
    const bad = ingress(space.ns, "unnamed", {
      host: "unnamed.test",
      service: "secure",
      annotations: nginx({ "backend-protocol": "HTTPS", "proxy-ssl-verify": "on" }),
    });
    const message = await rejection(() => objects.create(bad));
    assert.match(message, /denied the request/);
    assert.match(message, /proxy-ssl-verify/);
  });
});
