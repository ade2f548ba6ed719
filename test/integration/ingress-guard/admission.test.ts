// Ingress and TLS Secret admission through the real API server and the built Pepr module.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  AdmissionregistrationV1Api,
  NetworkingV1Api,
  type V1Ingress,
} from "@kubernetes/client-node";
import { WEBHOOK_SKIPPED_NAMESPACES } from "../../../core/ingress/selection";
import { makeCertificate, tlsSecret } from "../../fixtures/certificates";
import { OVERSIZED_RSA } from "../../fixtures/oversized-rsa";
import { MANGLED_CERTIFICATE } from "../../fixtures/mangled-certificate";
import { waitUntil } from "../../harness/wait";
import { apiMessage } from "../../../kube/api-errors";
import { MAX_SECRET_READS } from "../../../capabilities/ingress-guard/cluster-reads";
import {
  apiRequestCount,
  apiServerMetrics,
  rejection,
  testCluster,
  testNamespace,
} from "../../harness/cluster";

const cluster = testCluster();
const networking = cluster.kc.makeApiClient(NetworkingV1Api);

function ingress(
  name: string,
  options: {
    host?: string;
    annotations?: Record<string, string>;
    tls?: { hosts: string[]; secretName: string }[];
    className?: string;
  } = {},
): V1Ingress {
  return {
    metadata: { name, annotations: options.annotations },
    spec: {
      ingressClassName: options.className ?? "bulwark",
      tls: options.tls,
      rules: [
        {
          host: options.host ?? "shop.example.com",
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

describe("ingress-guard admission", () => {
  let ns: string;
  let drop: () => Promise<void>;
  const shopEcc = makeCertificate({ key: "ecdsa", dnsNames: ["shop.example.com"] });
  const shopRsa = makeCertificate({ key: "rsa", dnsNames: ["shop.example.com"] });
  const otherEcc = makeCertificate({ key: "ecdsa", dnsNames: ["other.example.com"] });

  before(async () => ([ns, drop] = await testNamespace(cluster, "guard")));
  after(async () => drop());

  it("stores a good Ingress with ECC and RSA certificates for one host", async () => {
    await cluster.core.createNamespacedSecret({
      namespace: ns,
      body: tlsSecret(ns, "shop-ecc", shopEcc),
    });
    await cluster.core.createNamespacedSecret({
      namespace: ns,
      body: tlsSecret(ns, "shop-rsa", shopRsa),
    });
    const created = await networking.createNamespacedIngress({
      namespace: ns,
      body: ingress("site-1", {
        annotations: {
          "nginx.ingress.kubernetes.io/version": "1",
          "nginx.ingress.kubernetes.io/enable-cors": "true",
        },
        tls: [
          { hosts: ["shop.example.com"], secretName: "shop-ecc" },
          { hosts: ["shop.example.com"], secretName: "shop-rsa" },
        ],
      }),
    });
    assert.equal(created.metadata?.name, "site-1");
  });

  it("rejects a malformed annotation, naming the annotation and the reason", async () => {
    const message = await rejection(() =>
      networking.createNamespacedIngress({
        namespace: ns,
        body: ingress("bad-weight", {
          annotations: {
            "nginx.ingress.kubernetes.io/canary": "true",
            "nginx.ingress.kubernetes.io/canary-weight": "abc",
          },
        }),
      }),
    );
    assert.match(
      message,
      /admission webhook "pepr-bulwark-ingresses\.pepr\.dev" denied the request/,
    );
    assert.match(
      message,
      /metadata\.annotations\["nginx\.ingress\.kubernetes\.io\/canary-weight"\]: expected .*got "abc"/,
    );
  });

  it("rejects a bad canary regex at admission", async () => {
    const message = await rejection(() =>
      networking.createNamespacedIngress({
        namespace: ns,
        body: ingress("bad-regex", {
          annotations: {
            "nginx.ingress.kubernetes.io/canary": "true",
            "nginx.ingress.kubernetes.io/canary-by-header": "X-Canary",
            "nginx.ingress.kubernetes.io/canary-by-header-pattern": "([a-z",
          },
        }),
      }),
    );
    assert.match(message, /canary-by-header-pattern/);
  });

  it("rejects a use-regex path whose program is over the bound, naming the path", async () => {
    // 70 characters that RE2 compiles to 6 004 instructions, which every gateway worker would
    // keep and every request to the host run; before the bound, a path of 11 KiB held 71 MiB.
    const body = ingress("huge-regex", {
      annotations: { "nginx.ingress.kubernetes.io/use-regex": "true" },
    });
    body.spec!.rules![0]!.http!.paths[0] = {
      path: `/${"[a-z]{1000}".repeat(6)}`,
      pathType: "ImplementationSpecific",
      backend: { service: { name: "web", port: { number: 80 } } },
    };
    const message = await rejection(() =>
      networking.createNamespacedIngress({ namespace: ns, body }),
    );
    assert.match(
      message,
      /spec\.rules\[0\]\.http\.paths\[0\]\.path: is a regular expression \(use-regex is on\) that compiles to 6004 RE2 instructions, more than the 5000 a pattern may have/,
    );
  });

  it("refuses a write that would break a path on a regex host: a plain path there that is no regex, and the regex Ingress that would make one", async () => {
    // As ingress-nginx, whose nginx -t fails the whole configuration: one use-regex Ingress on a
    // host makes every path of that host a regex, other tenants' too. Admission knows the
    // other Ingresses from a watch, a moment behind: an admitted probe is removed and retried.
    const path = (value: string, pathType = "Prefix") => ({
      path: value,
      pathType,
      backend: { service: { name: "web", port: { number: 80 } } },
    });
    const regex = { "nginx.ingress.kubernetes.io/use-regex": "true" };
    const maker = ingress("regex-maker", { host: "regex.example.com", annotations: regex });
    maker.spec!.rules![0]!.http!.paths = [path("/api/.*", "ImplementationSpecific")];
    await networking.createNamespacedIngress({ namespace: ns, body: maker });
    const plain = ingress("plain-on-regex", { host: "regex.example.com" });
    plain.spec!.rules![0]!.http!.paths = [path("/shop"), path("/a(b")];
    const refusedOnceWatched = async (body: V1Ingress) =>
      waitUntil(`${body.metadata?.name} refused`, async () => {
        try {
          await networking.createNamespacedIngress({ namespace: ns, body });
        } catch (error) {
          return apiMessage(error);
        }
        await networking.deleteNamespacedIngress({ namespace: ns, name: body.metadata!.name! });
        return undefined;
      });
    const own = await refusedOnceWatched(plain);
    assert.match(
      own,
      new RegExp(
        `spec\\.rules\\[0\\]\\.http\\.paths\\[1\\]\\.path: is served as a regular expression on host "regex\\.example\\.com", where Ingress ${ns}/regex-maker has use-regex or rewrite-target .* and as one it is not valid RE2 syntax: error parsing regexp: missing closing \\)`,
      ),
    );
    // Another class's Ingress there is not Bulwark's business, until it names Bulwark's class:
    // that update brings its paths onto the regex host.
    const other = ingress("other-class", { host: "regex.example.com", className: "other" });
    other.spec!.rules![0]!.http!.paths = [path("/a(b")];
    await networking.createNamespacedIngress({ namespace: ns, body: other });
    other.spec!.ingressClassName = "bulwark";
    const switched = await rejection(() =>
      networking.replaceNamespacedIngress({ namespace: ns, name: "other-class", body: other }),
    );
    assert.match(
      switched,
      /spec\.rules\[0\]\.http\.paths\[0\]\.path: is served as a regular expression/,
    );
    // The same path on a host no Ingress makes regex is a plain prefix, admitted.
    plain.spec!.rules![0]!.host = "plain.example.com";
    await networking.createNamespacedIngress({ namespace: ns, body: plain });
    const second = ingress("second-maker", { host: "plain.example.com", annotations: regex });
    second.spec!.rules![0]!.http!.paths = [path("/v[0-9]+", "ImplementationSpecific")];
    const neighbour = await refusedOnceWatched(second);
    assert.match(
      neighbour,
      new RegExp(
        `metadata\\.annotations\\["nginx\\.ingress\\.kubernetes\\.io/use-regex"\\]: makes every path of host "plain\\.example\\.com" but Exact ones a regular expression \\(as in ingress-nginx\\), and Ingress ${ns}/plain-on-regex's path "/a\\(b" is none`,
      ),
    );
  });

  it("rejects a host that its TLS Secret's certificate does not cover, naming the tls entry", async () => {
    await cluster.core.createNamespacedSecret({
      namespace: ns,
      body: tlsSecret(ns, "other-ecc", otherEcc),
    });
    const message = await rejection(() =>
      networking.createNamespacedIngress({
        namespace: ns,
        body: ingress("wrong-cert", {
          tls: [{ hosts: ["shop.example.com"], secretName: "other-ecc" }],
        }),
      }),
    );
    assert.match(
      message,
      /spec\.tls\[0\]\.hosts\[0\]: shop\.example\.com is not covered by Secret other-ecc's certificate \(other\.example\.com\)/,
    );
  });

  it("refuses an Ingress only on its TLS Secret as stored now, however soon the Secret's fix follows", async () => {
    // Admission holds TLS Secrets from a watch, a moment behind: each round it holds the
    // non-covering pair when the fix lands, and the Ingress created right after must be admitted.
    for (let round = 0; round < 10; round++) {
      const secretName = `swapped-${round}`;
      await cluster.core.createNamespacedSecret({
        namespace: ns,
        body: tlsSecret(ns, secretName, otherEcc),
      });
      const body = ingress(`swapped-${round}`, {
        tls: [{ hosts: ["shop.example.com"], secretName }],
      });
      assert.match(
        await rejection(() => networking.createNamespacedIngress({ namespace: ns, body })),
        /is not covered by Secret swapped-\d+'s certificate/,
      );
      await cluster.core.replaceNamespacedSecret({
        name: secretName,
        namespace: ns,
        body: tlsSecret(ns, secretName, shopEcc),
      });
      const created = await networking.createNamespacedIngress({ namespace: ns, body });
      assert.equal(created.metadata?.name, `swapped-${round}`);
    }
  });

  it("refuses a TLS Secret whose certificate Node constructs but cannot read, naming tls.crt", async () => {
    // Its public key getter threw out of the review: the Secret webhook, which fails open, then
    // approved it unreviewed, and the gateway's TLS compile threw on it for every host.
    await cluster.core.createNamespacedSecret({
      namespace: ns,
      body: tlsSecret(ns, "mangled-tls", shopEcc),
    });
    await networking.createNamespacedIngress({
      namespace: ns,
      body: ingress("mangled", {
        tls: [{ hosts: ["shop.example.com"], secretName: "mangled-tls" }],
      }),
    });
    const message = await rejection(() =>
      cluster.core.replaceNamespacedSecret({
        name: "mangled-tls",
        namespace: ns,
        body: tlsSecret(ns, "mangled-tls", MANGLED_CERTIFICATE),
      }),
    );
    assert.match(
      message,
      /data\["tls\.crt"\]: is not a certificate Bulwark can read \(.*decode error\)/,
    );
  });

  it("rejects two ECC certificates for one host", async () => {
    const second = makeCertificate({ key: "ecdsa", dnsNames: ["shop.example.com"] });
    await cluster.core.createNamespacedSecret({
      namespace: ns,
      body: tlsSecret(ns, "shop-ecc-2", second),
    });
    const message = await rejection(() =>
      networking.createNamespacedIngress({
        namespace: ns,
        body: ingress("two-ecc", {
          host: "shop.example.com",
          tls: [
            { hosts: ["shop.example.com"], secretName: "shop-ecc" },
            { hosts: ["shop.example.com"], secretName: "shop-ecc-2" },
          ],
        }),
      }),
    );
    assert.match(
      message,
      /spec\.tls\[1\]: host shop\.example\.com already has an ECC certificate from Secret shop-ecc/,
    );
  });

  it("rejects a TLS Secret update that would break an Ingress using it, and keeps the old data", async () => {
    const message = await rejection(() =>
      cluster.core.replaceNamespacedSecret({
        name: "shop-ecc",
        namespace: ns,
        body: tlsSecret(ns, "shop-ecc", otherEcc),
      }),
    );
    assert.match(
      message,
      /data\["tls\.crt"\]: breaks Ingress .*\/site-1: spec\.tls\[0\]\.hosts\[0\]: shop\.example\.com is not covered/,
    );
    const stored = await cluster.core.readNamespacedSecret({ name: "shop-ecc", namespace: ns });
    assert.equal(Buffer.from(stored.data!["tls.crt"]!, "base64").toString(), shopEcc.certPem);
  });

  it("rejects a used TLS Secret whose key does not match its certificate", async () => {
    const message = await rejection(() =>
      cluster.core.replaceNamespacedSecret({
        name: "shop-rsa",
        namespace: ns,
        body: tlsSecret(ns, "shop-rsa", { certPem: shopRsa.certPem, keyPem: shopEcc.keyPem }),
      }),
    );
    assert.match(message, /data\["tls\.key"\]: does not match/);
  });

  it("rejects a used TLS Secret whose RSA key is over 8 192 bits, naming the size", async () => {
    const message = await rejection(() =>
      cluster.core.replaceNamespacedSecret({
        name: "shop-rsa",
        namespace: ns,
        body: tlsSecret(ns, "shop-rsa", OVERSIZED_RSA),
      }),
    );
    assert.match(
      message,
      /data\["tls\.crt"\]: has an RSA key of 8320 bits; at most 8192 are served/,
    );
  });

  it("reads a bounded number of Secrets for an Ingress naming 500 that do not exist", async () => {
    // Each Secret no watch holds was read from the API server, twice when the cached read missed:
    // one create of this 30 KB Ingress cost the API server 1 000 requests before the bound.
    const body = ingress("many-secrets");
    body.spec!.tls = Array.from({ length: 500 }, (_, k) => ({
      hosts: [`h${k}.shop.example.com`],
      secretName: `absent-${k}`,
    }));
    const before = apiRequestCount(await apiServerMetrics(cluster.kc), "secrets", "GET");
    await networking.createNamespacedIngress({ namespace: ns, body, dryRun: "All" });
    const reads = apiRequestCount(await apiServerMetrics(cluster.kc), "secrets", "GET") - before;
    assert.ok(reads > 0 && reads <= 2 * MAX_SECRET_READS + 20, `${reads} Secret reads`);
  });

  it("leaves Ingresses of other classes and unused Secrets alone", async () => {
    await networking.createNamespacedIngress({
      namespace: ns,
      body: ingress("nginx-owned", {
        className: "nginx",
        annotations: { "nginx.ingress.kubernetes.io/canary-weight": "abc" },
      }),
    });
    await cluster.core.createNamespacedSecret({
      namespace: ns,
      body: tlsSecret(ns, "unused", { certPem: shopRsa.certPem, keyPem: shopEcc.keyPem }),
    });
  });

  it("stores an Ingress with an unknown annotation under our prefix (a warning, not a rejection)", async () => {
    const created = await networking.createNamespacedIngress({
      namespace: ns,
      body: ingress("site-2", {
        host: "two.example.com",
        annotations: { "nginx.ingress.kubernetes.io/made-up": "x" },
      }),
    });
    assert.equal(created.metadata?.name, "site-2");
  });
});

describe("the namespaces the webhooks skip", () => {
  it("are exactly the ones the gateway and the checksum leave out by default, and Bulwark's own for pods and TLS Secrets", async () => {
    const admission = cluster.kc.makeApiClient(AdmissionregistrationV1Api);
    const skippedBy = new Map<string, string[]>();
    // Pepr names both configurations alike; pods are only in the mutating one.
    const configs = (
      await Promise.all(
        cluster.webhookNames.flatMap(name => [
          admission.readValidatingWebhookConfiguration({ name }).catch(() => undefined),
          admission.readMutatingWebhookConfiguration({ name }).catch(() => undefined),
        ]),
      )
    ).filter(config => config !== undefined);
    for (const config of configs) {
      for (const webhook of config.webhooks ?? []) {
        const notIn = (webhook.namespaceSelector?.matchExpressions ?? []).filter(
          e => e.key === "kubernetes.io/metadata.name" && e.operator === "NotIn",
        );
        for (const resource of (webhook.rules ?? []).flatMap(r => r.resources ?? [])) {
          skippedBy.set(resource, notIn.flatMap(e => e.values ?? []).sort());
        }
      }
    }
    const webhookDefault = [...WEBHOOK_SKIPPED_NAMESPACES].sort();
    assert.deepEqual(skippedBy.get("ingresses"), webhookDefault);
    // Bulwark's own workloads never wait on its admission (packaging/webhook-policy.ts).
    const withOwn = [...webhookDefault, "bulwark-system"].sort();
    assert.deepEqual(skippedBy.get("pods"), withOwn);
    assert.deepEqual(skippedBy.get("secrets"), withOwn);
  });
});
