import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { z } from "zod";
import { computeChecksum, idFunction } from "./compute";
import { checksumOfIds } from "./id-set";
import type { IngressLike } from "./objects";

const VERSION = "nginx.ingress.kubernetes.io/version";

// Golden vectors from Tengine's documentation, kept in the repository (test/fixtures/checksum/).
const vectorSchema = z.object({ checksum: z.string(), ids: z.array(z.string()) });
function vector(file: string): z.infer<typeof vectorSchema> {
  const path = resolve(__dirname, "../../test/fixtures/checksum", file);
  return vectorSchema.parse(JSON.parse(readFileSync(path, "utf8")));
}

/** A real-looking Ingress whose Tengine ID is `id` ("<N>-<V>"). */
function ingressFor(id: string, index: number): IngressLike {
  const [n, v] = id.split("-");
  return {
    metadata: {
      name: `alibaba-dt-site-${n}`,
      namespace: `team-${index % 7}`,
      annotations: {
        [VERSION]: v ?? "",
        "nginx.ingress.kubernetes.io/ssl-redirect": "true",
        "kubectl.kubernetes.io/last-applied-configuration": "{}",
      },
    },
    spec: {
      ingressClassName: "bulwark",
      rules: [
        {
          host: `site-${n}.example.com`,
          http: {
            paths: [
              {
                path: "/",
                pathType: "Prefix",
                backend: { service: { name: `site-${n}`, port: { number: 80 } } },
              },
            ],
          },
        },
      ],
    },
  };
}

/** Deterministic shuffle (a linear congruential generator): tests never use Math.random. */
function shuffled<T>(items: readonly T[], seed: number): T[] {
  const copy = [...items];
  let state = seed;
  for (let i = copy.length - 1; i > 0; i--) {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    const j = state % (i + 1);
    [copy[i], copy[j]] = [copy[j] as T, copy[i] as T];
  }
  return copy;
}

describe("computeChecksum in tengine mode", () => {
  const ingressVector = vector("tengine-ingress-checksum.json");
  const ingresses = ingressVector.ids.map(ingressFor);

  it("given the 265 Ingresses of Tengine's IngressCheckSum example, returns 1bc5a4a332e9941cd12c3db6946cda9c", () => {
    assert.equal(ingresses.length, 265);
    const computed = computeChecksum("Ingress", "tengine", ingresses);
    assert.equal(computed.checksum, "1bc5a4a332e9941cd12c3db6946cda9c");
    assert.equal(computed.checksum, ingressVector.checksum);
    assert.deepEqual(computed.ids, ingressVector.ids);
    assert.deepEqual(computed.skipped, []);
  });

  for (const seed of [1, 2, 3]) {
    it(`given the same Ingresses shuffled (seed ${seed}), returns the same checksum`, () => {
      const computed = computeChecksum("Ingress", "tengine", shuffled(ingresses, seed));
      assert.equal(computed.checksum, ingressVector.checksum);
    });
  }

  it("given Ingresses that Tengine leaves out among them, returns the same checksum and lists them", () => {
    const extra: IngressLike[] = [
      { metadata: { name: "no-version-1", namespace: "a" } },
      { metadata: { name: "version-zero-2", namespace: "a", annotations: { [VERSION]: "0" } } },
      { metadata: { name: "no-number", namespace: "b", annotations: { [VERSION]: "1" } } },
    ];
    const computed = computeChecksum("Ingress", "tengine", [...extra, ...ingresses]);
    assert.equal(computed.checksum, ingressVector.checksum);
    assert.deepEqual(computed.skipped, [
      { key: "a/no-version-1", reason: `no ${VERSION} annotation` },
      { key: "a/version-zero-2", reason: `${VERSION} is 0` },
      { key: "b/no-number", reason: 'name does not end in "-<integer>": "no-number"' },
    ]);
  });

  it("given one Ingress's version changed, returns another checksum", () => {
    const changed = ingresses.map((ingress, i) => (i === 100 ? ingressFor("1-2", i) : ingress));
    assert.notEqual(
      computeChecksum("Ingress", "tengine", changed).checksum,
      ingressVector.checksum,
    );
  });

  it("given the 26 IDs of Tengine's SecretCheckSum example, returns 50d00d896e16a82a5fe3e9b741abf04e", () => {
    // The example publishes IDs, not certificates: the ID function is covered by certificate.test.ts.
    const secretVector = vector("tengine-secret-checksum.json");
    assert.equal(secretVector.ids.length, 26);
    assert.equal(
      checksumOfIds(shuffled(secretVector.ids, 7), "tengine"),
      "50d00d896e16a82a5fe3e9b741abf04e",
    );
    assert.equal(checksumOfIds(secretVector.ids, "tengine"), secretVector.checksum);
  });

  it("given no objects, returns the MD5 of the empty string", () => {
    assert.equal(
      computeChecksum("Secret", "tengine", []).checksum,
      "d41d8cd98f00b204e9800998ecf8427e",
    );
  });
});

describe("computeChecksum in content mode", () => {
  it("given the same Ingresses in another order, returns the same checksum and namespaced IDs", () => {
    const ingresses = vector("tengine-ingress-checksum.json").ids.map(ingressFor);
    const a = computeChecksum("Ingress", "content", ingresses);
    const b = computeChecksum("Ingress", "content", shuffled(ingresses, 5));
    assert.equal(a.checksum, b.checksum);
    assert.equal(a.ids.length, 265);
    assert.match(a.ids[0] ?? "", /^team-\d\/alibaba-dt-site-\d+@[0-9a-f]{64}$/);
  });

  it("given a Secret without a namespace, lists it as skipped", () => {
    const computed = computeChecksum("Secret", "content", [{ metadata: { name: "tls" } }]);
    assert.deepEqual(computed.skipped, [{ key: "tls", reason: "no metadata.namespace" }]);
  });
});

describe("idFunction", () => {
  it("given each kind and mode, returns the matching ID function", () => {
    const ingress = ingressFor("42-3", 0);
    assert.deepEqual(idFunction("Ingress", "tengine")(ingress), {
      ok: true,
      value: "42-3",
      warnings: [],
    });
    const content = idFunction("Ingress", "content")(ingress);
    assert.ok(content.ok && content.value.startsWith("team-0/alibaba-dt-site-42@"));
    const secret = idFunction("Secret", "content")({ metadata: { name: "s", namespace: "n" } });
    assert.ok(secret.ok && secret.value.startsWith("n/s@"));
    const tengineSecret = idFunction("Secret", "tengine")({ metadata: { name: "s-1" } });
    assert.equal(tengineSecret.ok, false);
  });
});
