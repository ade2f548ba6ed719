import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import {
  contentIngressId,
  contentIngressIdResult,
  contentSecretId,
  ingressContent,
  secretContent,
} from "./content";
import type { IngressLike, SecretLike } from "./objects";

const sha256 = (text: string): string => createHash("sha256").update(text, "utf8").digest("hex");

interface Ingress extends IngressLike {
  metadata: {
    name?: string;
    namespace?: string;
    annotations?: Record<string, string>;
    labels?: Record<string, string>;
    resourceVersion?: string;
    uid?: string;
    generation?: number;
    creationTimestamp?: string;
    managedFields?: unknown[];
  };
  spec: { ingressClassName?: string; rules: { host: string }[] };
  status?: unknown;
}

const base = (): Ingress => ({
  metadata: {
    name: "shop",
    namespace: "web",
    annotations: { "nginx.ingress.kubernetes.io/canary": "true" },
  },
  spec: { ingressClassName: "bulwark", rules: [{ host: "shop.example" }] },
});

function changed(change: (ingress: Ingress) => void): Ingress {
  const ingress = base();
  change(ingress);
  return ingress;
}

const annotate = (key: string, value: string) => (ingress: Ingress) => {
  ingress.metadata.annotations = { ...ingress.metadata.annotations, [key]: value };
};

describe("contentIngressId", () => {
  it("given an Ingress, hashes exactly the documented document", () => {
    const text =
      '{"annotations":{"nginx.ingress.kubernetes.io/canary":"true"},' +
      '"spec":{"ingressClassName":"bulwark","rules":[{"host":"shop.example"}]}}';
    assert.equal(contentIngressId(base()), `web/shop@${sha256(text)}`);
  });

  const unchanged: [string, (ingress: Ingress) => void][] = [
    [
      "a new resourceVersion, uid, generation and creationTimestamp",
      i =>
        Object.assign(i.metadata, {
          resourceVersion: "99",
          uid: "u",
          generation: 7,
          creationTimestamp: "2025-01-01T00:00:00Z",
        }),
    ],
    [
      "managedFields",
      i => (i.metadata.managedFields = [{ manager: "kubectl", operation: "Apply" }]),
    ],
    [
      "kubectl's last-applied-configuration",
      annotate("kubectl.kubernetes.io/last-applied-configuration", "{}"),
    ],
    ["a status", i => (i.status = { loadBalancer: { ingress: [{ ip: "10.0.0.1" }] } })],
    ["labels", i => (i.metadata.labels = { app: "shop" })],
    ["a foreign annotation", annotate("example.com/owner", "team-a")],
    ["a permission.bulwark.dev/ annotation", annotate("permission.bulwark.dev/group", "g")],
    ["a look-alike prefix", annotate("xnginx.ingress.kubernetes.io/canary", "false")],
    [
      "annotations in another order",
      i => (i.metadata.annotations = { z: "1", ...i.metadata.annotations }),
    ],
  ];
  for (const [title, change] of unchanged) {
    it(`given ${title}, returns the same ID`, () => {
      assert.equal(contentIngressId(changed(change)), contentIngressId(base()));
    });
  }

  const different: [string, (ingress: Ingress) => void][] = [
    ["a changed host", i => (i.spec.rules[0] = { host: "other.example" })],
    [
      "a changed nginx.ingress.kubernetes.io/ annotation",
      annotate("nginx.ingress.kubernetes.io/canary", "false"),
    ],
    [
      "an added nginx.ingress.kubernetes.io/ annotation",
      annotate("nginx.ingress.kubernetes.io/canary-weight", "10"),
    ],
    ["an added bulwark.dev/ annotation", annotate("bulwark.dev/note", "x")],
    ["an unchanged spec under a new version", annotate("nginx.ingress.kubernetes.io/version", "2")],
  ];
  for (const [title, change] of different) {
    it(`given ${title}, returns another ID`, () => {
      assert.notEqual(contentIngressId(changed(change)), contentIngressId(base()));
    });
  }

  it("given a renamed or moved Ingress, returns the new namespace/name in the ID", () => {
    const hash = contentIngressId(base())?.split("@")[1];
    assert.equal(
      contentIngressId(changed(i => (i.metadata.name = "shop-2"))),
      `web/shop-2@${hash}`,
    );
    assert.equal(
      contentIngressId(changed(i => (i.metadata.namespace = "edge"))),
      `edge/shop@${hash}`,
    );
  });

  it("given an Ingress without spec or annotations, hashes {annotations:{},spec:{}}", () => {
    const ingress = { metadata: { name: "a", namespace: "b" } };
    assert.deepEqual(ingressContent(ingress), { annotations: {}, spec: {} });
    assert.equal(contentIngressId(ingress), `b/a@${sha256('{"annotations":{},"spec":{}}')}`);
  });

  it("given no namespace or name, returns why there is no ID", () => {
    const result = contentIngressIdResult({ metadata: {} });
    assert.deepEqual(result.ok ? [] : result.errors.map(e => e.message), [
      "no metadata.namespace",
      "no metadata.name",
    ]);
    assert.equal(contentIngressId({ metadata: { name: "a" } }), undefined);
  });
});

describe("contentSecretId", () => {
  const stored: SecretLike = {
    metadata: {
      name: "tls",
      namespace: "web",
      annotations: { "bulwark.dev/rotation": "1", "example.com/x": "y" },
    },
    type: "kubernetes.io/tls",
    data: {
      "tls.crt": Buffer.from("CERT").toString("base64"),
      "tls.key": Buffer.from("KEY").toString("base64"),
    },
  };

  it("given a Secret, hashes exactly the documented document", () => {
    const text =
      '{"annotations":{"bulwark.dev/rotation":"1"},' +
      '"data":{"tls.crt":"Q0VSVA==","tls.key":"S0VZ"},"type":"kubernetes.io/tls"}';
    assert.equal(contentSecretId(stored), `web/tls@${sha256(text)}`);
  });

  it("given decoded data (as Pepr passes it), returns the same ID as for the stored Secret", () => {
    const decoded = { ...stored, data: { "tls.crt": "CERT", "tls.key": "KEY" } };
    assert.equal(contentSecretId(decoded, { secretData: "decoded" }), contentSecretId(stored));
  });

  it("given a changed data value or type, returns another ID", () => {
    const data = { ...stored.data, "tls.key": Buffer.from("KEY2").toString("base64") };
    assert.notEqual(contentSecretId({ ...stored, data }), contentSecretId(stored));
    assert.notEqual(contentSecretId({ ...stored, type: "Opaque" }), contentSecretId(stored));
  });

  it("given no type or data, hashes type Opaque and data {}", () => {
    const secret = { metadata: { name: "a", namespace: "b" } };
    assert.deepEqual(secretContent(secret), { annotations: {}, data: {}, type: "Opaque" });
    assert.equal(contentSecretId(secret), contentSecretId({ ...secret, type: "Opaque", data: {} }));
  });
});
