// The gateway serves only what passes Bulwark's review, through the real API server: Ingresses
// the webhook never saw (kube-system is skipped by it) are left out by default, and when the
// gateway is told to serve that namespace it reviews them itself: an unsupported security
// annotation answers 503 where the route stands (the shorter prefix does not catch it), a
// canary that fails to parse is served as nothing, never as the main it is older than.
// Canaries take their main's proxy settings; ssl-redirect is decided per host.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { KubernetesObject } from "@kubernetes/client-node";
import { applyOrThrow } from "../../../hack/control-plane/kube";
import { waitUntil } from "../../harness/wait";
import { makeCertificate, tlsSecret } from "../../fixtures/certificates";
import { nextCreationSecond, rejection, testCluster, testNamespace } from "../../harness/cluster";
import {
  endpointSlice,
  ensureIngressClass,
  get,
  ingress,
  startBackend,
  startGateway,
  waitServed,
  type Backend,
  type RunningGateway,
} from "./harness";

const cluster = testCluster();
const P = "nginx.ingress.kubernetes.io/";
const SKIPPED = "kube-system";

describe("gateway review: nothing unvalidated is served", () => {
  let ns: string;
  let removeNamespace: () => Promise<void>;
  let main: Backend;
  let canaryBackend: Backend;
  let unreviewed: RunningGateway;
  let reviewing: RunningGateway;
  const suffix = Math.random().toString(16).slice(2, 8);
  const host = `review-${suffix}.example.com`;
  const skippedHost = `skipped-${suffix}.example.com`;
  // Written into kube-system, where no webhook looks.
  const sneaked: KubernetesObject[] = [];

  before(async () => {
    [ns, removeNamespace] = await testNamespace(cluster, "gw-review");
    await ensureIngressClass(cluster.kc);
    [main, canaryBackend] = [await startBackend("main"), await startBackend("canary")];
    sneaked.push(
      endpointSlice(SKIPPED, `admin-${suffix}`, main.port),
      // Older than the main below, on the same host and path, and broken.
      ingress(SKIPPED, `broken-canary-${suffix}`, {
        host,
        service: `admin-${suffix}`,
        annotations: { [`${P}canary`]: "True", [`${P}canary-weight`]: "lots" },
      }),
      ingress(SKIPPED, `walled-${suffix}`, {
        host,
        path: "/admin",
        service: `admin-${suffix}`,
        annotations: { [`${P}configuration-snippet`]: "deny all;" },
      }),
      ingress(SKIPPED, `plain-${suffix}`, { host: skippedHost, service: `admin-${suffix}` }),
    );
    await applyOrThrow(cluster.kc, sneaked);
    await nextCreationSecond(Date.now());
    await applyOrThrow(cluster.kc, [
      endpointSlice(ns, "main", main.port),
      endpointSlice(ns, "canary", canaryBackend.port),
      ingress(ns, "main", {
        host,
        service: "main",
        annotations: { [`${P}proxy-read-timeout`]: "1" },
      }),
      // "True" is a canary as ingress-nginx reads it (strconv.ParseBool); its own timeout is ignored.
      ingress(ns, "canary", {
        host,
        service: "canary",
        annotations: {
          [`${P}canary`]: "True",
          [`${P}canary-by-header`]: "X-Canary",
          [`${P}proxy-read-timeout`]: "30",
        },
      }),
    ]);
    const namespaces = `${ns},${SKIPPED}`;
    unreviewed = await startGateway({
      kubeconfigPath: cluster.kubeconfigPath,
      namespace: namespaces,
      podName: "bulwark-gateway-0",
    });
    reviewing = await startGateway({
      kubeconfigPath: cluster.kubeconfigPath,
      namespace: namespaces,
      podName: "bulwark-gateway-1",
      env: { BULWARK_EXCLUDED_NAMESPACES: "" },
    });
  });

  after(async () => {
    await unreviewed?.stop();
    await reviewing?.stop();
    await main?.close();
    await canaryBackend?.close();
    for (const object of sneaked) await cluster.objects.delete(object).catch(() => undefined);
    await removeNamespace?.();
  });

  it("leaves out the namespaces the webhooks skip, by default", async () => {
    await waitServed(unreviewed.httpPort, host, "main");
    assert.equal((await get(unreviewed.httpPort, skippedHost)).status, 404);
    // The walled path is not served: its prefix falls to the main's "/".
    assert.equal((await get(unreviewed.httpPort, host, "/admin/users")).body, "main /admin/users");
  });

  it("serves a valid Ingress of a skipped namespace when told to, after reviewing it", async () => {
    await waitServed(reviewing.httpPort, skippedHost, "main");
  });

  it("answers 503 where an unsupported security annotation stands; the shorter prefix does not catch it", async () => {
    const reply = await waitUntil("the walled path to answer 503", async () => {
      const got = await get(reviewing.httpPort, host, "/admin/users");
      return got.status === 503 ? got : undefined;
    });
    assert.match(reply.body, /not served/);
    assert.equal((await get(reviewing.httpPort, host, "/shop")).body, "main /shop");
  });

  it("serves a broken canary as nothing: the newer main keeps its path", async () => {
    const reply = await get(reviewing.httpPort, host, "/", { headers: { "x-canary": "always" } });
    // The valid canary ("True") still serves; the broken older one took nothing.
    assert.equal(reply.body, "canary /");
    assert.equal((await get(reviewing.httpPort, host, "/")).body, "main /");
  });

  it("applies the main's proxy-read-timeout to canary requests (ingress-nginx: inherited)", async () => {
    const reply = await get(reviewing.httpPort, host, "/?ms=2500", {
      headers: { "x-canary": "always" },
    });
    assert.equal(reply.status, 504);
  });
});

describe("gateway review: admission and ssl-redirect per host", () => {
  let ns: string;
  let removeNamespace: () => Promise<void>;
  let web: Backend;
  let gateway: RunningGateway;
  const host = `split-${Math.random().toString(16).slice(2, 8)}.example.com`;

  before(async () => {
    [ns, removeNamespace] = await testNamespace(cluster, "gw-review-tls");
    await ensureIngressClass(cluster.kc);
    web = await startBackend("web");
    await applyOrThrow(cluster.kc, [
      tlsSecret(ns, "split-tls", makeCertificate({ key: "ecdsa", dnsNames: [host] })),
      endpointSlice(ns, "web", web.port),
      ingress(ns, "site", { host, service: "web", tlsSecrets: ["split-tls"] }),
      // Same host, no TLS of its own.
      ingress(ns, "api", { host, path: "/api", service: "web" }),
      ingress(ns, "hooks", {
        host,
        path: "/hooks",
        service: "web",
        annotations: { [`${P}ssl-redirect`]: "false" },
      }),
    ]);
    gateway = await startGateway({ kubeconfigPath: cluster.kubeconfigPath, namespace: ns });
  });

  after(async () => {
    await gateway?.stop();
    await web?.close();
    await removeNamespace?.();
  });

  it("denies an unsupported security annotation at admission, naming it", async () => {
    const message = await rejection(() =>
      applyOrThrow(cluster.kc, [
        ingress(ns, "walled", {
          host,
          service: "web",
          annotations: { [`${P}auth-tls-secret`]: "default/client-ca" },
        }),
      ]),
    );
    assert.match(message, /nginx\.ingress\.kubernetes\.io\/auth-tls-secret.*security control/);
  });

  it("redirects every path of a host with a certificate, unless the path's Ingress opts out", async () => {
    const root = await waitUntil("/ to redirect", async () => {
      const reply = await get(gateway.httpPort, host, "/");
      return reply.status === 308 ? reply : undefined;
    });
    assert.equal(root.status, 308);
    assert.equal((await get(gateway.httpPort, host, "/api/orders")).status, 308);
    assert.equal((await get(gateway.httpPort, host, "/hooks/x")).body, "web /hooks/x");
  });
});
