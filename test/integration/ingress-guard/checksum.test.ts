// The global checksum end to end: `bulwark checksum publish` attests the cluster, the guard in the
// Pepr watcher turns the checksum object's status Consistent, and an unpublished change turns it
// inconsistent, naming the object that changed.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { CustomObjectsApi, NetworkingV1Api, type V1Ingress } from "@kubernetes/client-node";
import { waitUntil } from "../../harness/wait";
import { PUBLISHER, publishChecksum, removePublished } from "../../harness/checksums";
import type { ChecksumStatus } from "../../../core/checksum/crd";
import { makeCertificate, tlsSecret } from "../../fixtures/certificates";
import {
  nextCreationSecond,
  quietCluster,
  testCluster,
  testNamespace,
} from "../../harness/cluster";

const cluster = testCluster();
const networking = cluster.kc.makeApiClient(NetworkingV1Api);
const custom = cluster.kc.makeApiClient(CustomObjectsApi);
const GROUP = { group: "tengine.taobao.org", version: "v1" };
interface ChecksumObject {
  metadata: { name: string; namespace: string; creationTimestamp: string };
  spec: { checksum: string; ids: string[]; mode: string };
  status?: ChecksumStatus;
}

function ingress(name: string, host: string): V1Ingress {
  return {
    metadata: { name, annotations: { "nginx.ingress.kubernetes.io/version": "1" } },
    spec: {
      ingressClassName: "bulwark",
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

/** Newest first, as the guard orders them (creation time, then name). */
async function checksumObjects(ns: string, plural: string): Promise<ChecksumObject[]> {
  const list = (await custom.listNamespacedCustomObject({ ...GROUP, namespace: ns, plural })) as {
    items: ChecksumObject[];
  };
  const created = (o: ChecksumObject) => Date.parse(o.metadata.creationTimestamp);
  return list.items.sort(
    (a, b) => created(b) - created(a) || (a.metadata.name < b.metadata.name ? 1 : -1),
  );
}

async function waitForCondition(
  ns: string,
  plural: string,
  name: string,
  status: "True" | "False",
): Promise<ChecksumObject> {
  return waitUntil(`${plural} ${ns}/${name} Consistent=${status}`, async () => {
    const object = (await custom.getNamespacedCustomObject({
      ...GROUP,
      namespace: ns,
      plural,
      name,
    })) as ChecksumObject;
    const condition = object.status?.conditions?.find(c => c.type === "Consistent");
    return condition?.status === status ? object : undefined;
  });
}

/** Other test files' namespaces must be gone: the checksum covers the whole cluster. */

describe("the global checksum", () => {
  let ns: string;
  let drop: () => Promise<void>;
  before(async () => {
    await quietCluster(cluster);
    [ns, drop] = await testNamespace(cluster, "checksum");
    for (const [name, host] of [
      ["site-101", "a.example.com"],
      ["site-102", "b.example.com"],
      ["site-103", "c.example.com"],
    ] as const) {
      await networking.createNamespacedIngress({ namespace: ns, body: ingress(name, host) });
    }
  });
  after(async () => {
    await removePublished(cluster);
    await drop();
  });

  it("shows MODE, CONSISTENT, REASON, GUARD, DIFFERS and AGE columns in `kubectl get ingresschecksums`", async () => {
    const table = await fetchTable(
      `/apis/tengine.taobao.org/v1/namespaces/${PUBLISHER}/ingresschecksums`,
    );
    const names = table.columnDefinitions.map(c => c.name);
    for (const column of ["Mode", "Consistent", "Reason", "Guard", "Differs", "Age"])
      assert.ok(names.includes(column), names.join());
  });

  it("turns Consistent when the cluster matches a published checksum, keeps the previous one and deletes older ones", async () => {
    const first = await publishChecksum(PUBLISHER, "ingress", "content");
    const firstAt = Date.now();
    await waitForCondition(PUBLISHER, "ingresschecksums", first, "True");
    await nextCreationSecond(firstAt);
    const second = await publishChecksum(PUBLISHER, "ingress", "content");
    await nextCreationSecond(Date.now());
    // This time on a terminal: the listing, then the deletions, on one line erased at the end.
    const ERASE = "\r\x1b[2K";
    const terminal: string[] = [];
    const third = await publishChecksum(PUBLISHER, "ingress", "content", {
      isTTY: true,
      write: s => (terminal.push(String(s)), true),
    });
    assert.equal(terminal[0], `${ERASE}listing Ingress objects in every namespace…`);
    assert.equal(terminal.at(-1), ERASE);
    for (const line of terminal) {
      assert.ok(line.startsWith(ERASE), JSON.stringify(line));
      assert.match(
        line.slice(ERASE.length),
        /^(listing .*…|deleting 1\/1 older IngressCheckSum objects…)?$/,
      );
    }
    const object = await waitForCondition(PUBLISHER, "ingresschecksums", third, "True");
    assert.deepEqual(
      (await checksumObjects(PUBLISHER, "ingresschecksums")).map(o => o.metadata.name),
      [third, second],
    );
    assert.equal(object.status?.observedChecksum, object.spec.checksum);
    assert.ok((object.status?.objectCount ?? 0) >= 3);
  });

  it("turns inconsistent when one Ingress is edited without republishing, and names it", async () => {
    const [published] = await checksumObjects(PUBLISHER, "ingresschecksums");
    assert.ok(published);
    const before = published.spec.ids.find(id => id.startsWith(`${ns}/site-102@`));
    assert.ok(before, "the published IDs include site-102");
    const site = await networking.readNamespacedIngress({ name: "site-102", namespace: ns });
    site.spec!.rules![0]!.host = "b2.example.com";
    await networking.replaceNamespacedIngress({ name: "site-102", namespace: ns, body: site });

    const object = await waitForCondition(
      PUBLISHER,
      "ingresschecksums",
      published.metadata.name,
      "False",
    );
    assert.deepEqual(object.status?.missing, [before]);
    assert.equal(object.status?.unexpected?.length, 1);
    assert.match(object.status?.unexpected?.[0] ?? "", new RegExp(`^${ns}/site-102@`));
    const condition = object.status?.conditions?.[0];
    assert.equal(condition?.reason, "Mismatch");
    assert.match(condition?.message ?? "", /1 published IDs missing, 1 unexpected/);
    // The module runs in observe mode, as the chart's default: it says what enforcing would do.
    assert.match(condition?.message ?? "", /\(observe: enforcing would refuse this; /);
    assert.equal(object.status?.enforcement, "observe");
    assert.equal(object.status?.differing, `unexpected ${ns}/site-102; missing ${ns}/site-102`);
    const metrics = await (await fetch(cluster.metricsUrl)).text();
    assert.match(metrics, /^bulwark_checksum_would_refuse\{kind="ingress"\} 1$/m);

    // The Event follows the status write.
    await waitUntil("a ChecksumMismatch Warning Event", async () => {
      const events = await cluster.core.listNamespacedEvent({
        namespace: PUBLISHER,
        fieldSelector: `involvedObject.name=${published.metadata.name}`,
      });
      return events.items.some(e => e.reason === "ChecksumMismatch" && e.type === "Warning");
    });
  });

  it("names a deleted Ingress as missing, and exports the state as a metric", async () => {
    const [published] = await checksumObjects(PUBLISHER, "ingresschecksums");
    await networking.deleteNamespacedIngress({ name: "site-103", namespace: ns });
    const object = await waitUntil("site-103 reported missing", async () => {
      const o = (await custom.getNamespacedCustomObject({
        ...GROUP,
        namespace: PUBLISHER,
        plural: "ingresschecksums",
        name: published!.metadata.name,
      })) as ChecksumObject;
      return o.status?.missing?.some(id => id.startsWith(`${ns}/site-103@`)) ? o : undefined;
    });
    assert.equal(object.status?.missingCount, 2);
    const metrics = await (await fetch(cluster.metricsUrl)).text();
    assert.match(metrics, /bulwark_checksum_consistent\{kind="ingress"\} 0/);
    assert.match(metrics, /bulwark_checksum_mismatches_total\{kind="ingress"\} [1-9]/);
    assert.match(metrics, /bulwark_checksum_verify_duration_seconds_count\{kind="ingress"\} [1-9]/);
  });

  it("turns Consistent again once the publisher attests the change, in tengine mode too", async () => {
    const name = await publishChecksum(PUBLISHER, "ingress", "tengine");
    const object = await waitForCondition(PUBLISHER, "ingresschecksums", name, "True");
    assert.ok(object.spec.ids.includes("101-1") && object.spec.ids.includes("102-1"));
    assert.ok(!object.spec.ids.includes("103-1"));
    const metrics = await (await fetch(cluster.metricsUrl)).text();
    assert.match(metrics, /bulwark_checksum_consistent\{kind="ingress"\} 1/);
  });

  it("attests TLS Secrets with SecretCheckSum, and notices a changed certificate", async () => {
    const cert = makeCertificate({ key: "ecdsa", dnsNames: ["a.example.com"] });
    await cluster.core.createNamespacedSecret({
      namespace: ns,
      body: tlsSecret(ns, "cert-7", cert, { "nginx.ingress.kubernetes.io/version": "1" }),
    });
    const name = await publishChecksum(PUBLISHER, "secret", "tengine");
    const object = await waitForCondition(PUBLISHER, "secretchecksums", name, "True");
    assert.ok(object.spec.ids.some(id => id.startsWith("7-1-")));
    const next = makeCertificate({ key: "ecdsa", dnsNames: ["a.example.com"] });
    await cluster.core.replaceNamespacedSecret({
      name: "cert-7",
      namespace: ns,
      body: tlsSecret(ns, "cert-7", next, { "nginx.ingress.kubernetes.io/version": "1" }),
    });
    const changed = await waitForCondition(PUBLISHER, "secretchecksums", name, "False");
    assert.ok(changed.status?.missing?.some(id => id.startsWith("7-1-")));
  });
});

async function fetchTable(path: string): Promise<{ columnDefinitions: { name: string }[] }> {
  const { request } = await import("node:https");
  const opts: { headers: Record<string, string>; ca?: string; cert?: string; key?: string } = {
    headers: { accept: "application/json;as=Table;v=v1;g=meta.k8s.io" },
  };
  await cluster.kc.applyToHTTPSOptions(opts as never);
  return new Promise((resolve, reject) => {
    request(`${cluster.server}${path}`, opts, res => {
      let body = "";
      res.on("data", c => (body += c));
      res.on("end", () => resolve(JSON.parse(body)));
    })
      .on("error", reject)
      .end();
  });
}

describe("checksum objects outside the publisher namespaces", () => {
  let ns: string;
  let drop: () => Promise<void>;
  before(async () => ([ns, drop] = await testNamespace(cluster, "untrusted-checksum")));
  after(async () => drop());

  it("are ignored, with an UntrustedPublisher Event on them and a metric", async () => {
    // A tenant attesting their own namespace: a checksum that would match their Ingress.
    await networking.createNamespacedIngress({
      namespace: ns,
      body: ingress("site-201", "t.example.com"),
    });
    await custom.createNamespacedCustomObject({
      ...GROUP,
      namespace: ns,
      plural: "ingresschecksums",
      body: {
        apiVersion: "tengine.taobao.org/v1",
        kind: "IngressCheckSum",
        metadata: { name: "self-attested" },
        spec: { timestamp: new Date().toISOString(), checksum: "0".repeat(64), mode: "content" },
      },
    });
    const event = await waitUntil("an UntrustedPublisher Event", async () => {
      const events = await cluster.core.listNamespacedEvent({
        namespace: ns,
        fieldSelector: "involvedObject.name=self-attested",
      });
      return events.items.find(e => e.reason === "UntrustedPublisher");
    });
    assert.match(event.message ?? "", /trusted only in the publisher namespaces \(bulwark-system/);
    const object = (await custom.getNamespacedCustomObject({
      ...GROUP,
      namespace: ns,
      plural: "ingresschecksums",
      name: "self-attested",
    })) as ChecksumObject;
    assert.equal(object.status, undefined, "the guard writes no status on an untrusted object");
    const metrics = await (await fetch(cluster.metricsUrl)).text();
    assert.match(metrics, /bulwark_checksum_untrusted_objects [1-9]/);
  });

  it("cannot be published there by the CLI", async () => {
    await assert.rejects(
      publishChecksum(ns, "ingress"),
      /not a publisher namespace \(bulwark-system; BULWARK_CHECKSUM_PUBLISHER_NAMESPACES\)/,
    );
  });
});
