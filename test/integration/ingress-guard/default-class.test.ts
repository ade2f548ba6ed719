// One selection for admission, the checksum and the gateway, through the real API server: an
// Ingress naming no class, created while bulwark was not the default (so the API server's
// DefaultIngressClass plugin left it unnamed), becomes Bulwark's when the class turns default.
// Then the checksum that attested the cluster no longer matches (the watcher's status says so),
// the gateway keeps it out until it is published, and the watcher reviews it: one carrying an
// unsupported security control gets a NotServed Event and answers 503.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { CustomObjectsApi, NetworkingV1Api, type V1Ingress } from "@kubernetes/client-node";
import { applyOrThrow } from "../../../hack/control-plane/kube";
import { waitUntil } from "../../harness/wait";
import { PUBLISHER, publishChecksum, removePublished } from "../../harness/checksums";
import type { ChecksumStatus } from "../../../core/checksum/crd";
import { quietCluster, testCluster, testNamespace } from "../../harness/cluster";
import {
  endpointSlice,
  get,
  startBackend,
  startGateway,
  waitServed,
  type Backend,
  type RunningGateway,
  defaultIngressClass,
} from "../gateway/harness";

const cluster = testCluster();
const networking = cluster.kc.makeApiClient(NetworkingV1Api);
const custom = cluster.kc.makeApiClient(CustomObjectsApi);

function classless(
  name: string,
  host: string,
  annotations: Record<string, string> = {},
): V1Ingress {
  return {
    metadata: { name, annotations },
    spec: {
      rules: [
        {
          host,
          http: {
            paths: [
              {
                path: "/",
                pathType: "Prefix",
                backend: { service: { name: "web", port: { number: 80 } } },
              },
            ],
          },
        },
      ],
    },
  };
}

async function consistent(name: string): Promise<ChecksumStatus | undefined> {
  const object = (await custom.getNamespacedCustomObject({
    group: "tengine.taobao.org",
    version: "v1",
    namespace: PUBLISHER,
    plural: "ingresschecksums",
    name,
  })) as { status?: ChecksumStatus };
  return object.status;
}

describe("a class-less Ingress when bulwark becomes the default class", () => {
  let ns: string;
  let drop: () => Promise<void>;
  let web: Backend;
  let gateway: RunningGateway;
  let published: string;
  const suffix = Math.random().toString(16).slice(2, 8);
  const plainHost = `plain-${suffix}.example.com`;
  const walledHost = `walled-${suffix}.example.com`;

  before(async () => {
    await quietCluster(cluster);
    await applyOrThrow(cluster.kc, [defaultIngressClass(false)]);
    [ns, drop] = await testNamespace(cluster, "default-class");
    web = await startBackend("web");
    await applyOrThrow(cluster.kc, [endpointSlice(ns, "web", web.port)]);
    // Not Bulwark's yet: admission lets both through, the security control included.
    await networking.createNamespacedIngress({
      namespace: ns,
      body: classless("plain", plainHost),
    });
    await networking.createNamespacedIngress({
      namespace: ns,
      body: classless("walled", walledHost, {
        "nginx.ingress.kubernetes.io/configuration-snippet": "deny all;",
      }),
    });
    published = await publishChecksum(PUBLISHER, "ingress");
    await waitUntil("the empty set to be attested", async () =>
      (await consistent(published))?.conditions?.some(c => c.status === "True"),
    );
    gateway = await startGateway({
      kubeconfigPath: cluster.kubeconfigPath,
      namespace: ns,
      env: { BULWARK_INGRESS_CHECKSUM: "true" },
    });
  });

  after(async () => {
    await applyOrThrow(cluster.kc, [defaultIngressClass(false)]);
    await removePublished(cluster);
    await gateway?.stop();
    await web?.close();
    await drop?.();
  });

  it("flips the checksum to mismatch and keeps the Ingress out of the gateway", async () => {
    assert.equal((await get(gateway.httpPort, plainHost)).status, 404);
    await applyOrThrow(cluster.kc, [defaultIngressClass(true)]);
    const status = await waitUntil("the checksum to turn inconsistent", async () => {
      const now = await consistent(published);
      return now?.conditions?.some(c => c.type === "Consistent" && c.status === "False")
        ? now
        : undefined;
    });
    assert.ok(
      status.unexpected?.some(id => id.startsWith(`${ns}/plain@`)),
      JSON.stringify(status.unexpected),
    );
    await waitUntil(
      "the gateway's guard to refuse the change",
      async () => (await gateway.health()).guard.ingress?.state === "mismatch",
    );
    assert.equal((await get(gateway.httpPort, plainHost)).status, 404);
  });

  it("serves it once the publisher attests it, and refuses the one with a security control", async () => {
    const next = await publishChecksum(PUBLISHER, "ingress");
    await waitUntil("the new checksum to match", async () =>
      (await consistent(next))?.conditions?.some(c => c.status === "True"),
    );
    await waitServed(gateway.httpPort, plainHost, "web");
    const walled = await waitUntil("the walled host to answer 503", async () => {
      const reply = await get(gateway.httpPort, walledHost);
      return reply.status === 503 ? reply : undefined;
    });
    assert.match(walled.body, /not served/);
  });

  it("tells the owner why on the Ingress, from the watcher", async () => {
    const event = await waitUntil("a NotServed Event on the walled Ingress", async () => {
      const events = await cluster.core.listNamespacedEvent({
        namespace: ns,
        fieldSelector: "involvedObject.name=walled",
      });
      return events.items.find(e => e.reason === "NotServed");
    });
    assert.equal(event.type, "Warning");
    assert.match(event.message ?? "", /configuration-snippet.*security control/);
  });

  it("lets the API server name the class of an Ingress created while it is the default", async () => {
    const created = await networking.createNamespacedIngress({
      namespace: ns,
      body: classless("later", `later-${suffix}.example.com`),
    });
    assert.equal(created.spec?.ingressClassName, "bulwark");
  });
});
