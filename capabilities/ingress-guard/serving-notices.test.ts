// The watcher's serving notices against a stand-in API server that records every request: a
// resync judges Ingresses on the Secrets it listed, without a read per Ingress; only a Secret it
// does not hold is read, and a Secret's event judges its Ingresses again.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Ingress } from "../../core/ingress/types";
import { makeCertificate, tlsSecret } from "../../test/fixtures/certificates";
import { KubeStandIn } from "../../test/harness/kube-stand-in";
import { guardMetrics } from "./metrics";
import { settingsScope } from "./scope";
import { ServingNotices } from "./serving-notices";

const shop = makeCertificate({ key: "ecdsa", dnsNames: ["*.shop.example.com"] });
const other = makeCertificate({ key: "ecdsa", dnsNames: ["other.example.com"] });

function ingress(name: string, secretName: string): Ingress {
  return {
    metadata: { namespace: "shop", name },
    spec: {
      ingressClassName: "bulwark",
      tls: [{ hosts: [`${name}.shop.example.com`], secretName }],
      rules: [
        {
          host: `${name}.shop.example.com`,
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

const refused = async (): Promise<number | undefined> =>
  (await guardMetrics.refusedIngresses.get()).values[0]?.value;

describe("ServingNotices against a stand-in API server", () => {
  let api: KubeStandIn;
  const kubeconfig = process.env.KUBECONFIG;

  before(async () => {
    api = await KubeStandIn.start();
    process.env.KUBECONFIG = api.kubeconfig();
  });

  after(async () => {
    process.env.KUBECONFIG = kubeconfig;
    await api.close();
  });

  it("judges a resync's Ingresses on the Secrets it listed: no read per Ingress", async () => {
    const notices = new ServingNotices(() => ({ ...settingsScope(), classIsDefault: false }));
    const ingresses = Array.from({ length: 50 }, (_, i) => ingress(`site-${i}`, "wildcard"));
    const opaque = { ...tlsSecret("shop", "opaque", shop), type: "Opaque" };
    await notices.onList(ingresses, [tlsSecret("shop", "wildcard", shop), opaque]);
    assert.equal(await refused(), 0);
    assert.deepEqual(api.seen("GET", /secrets/), [], "no Secret read");

    // An Ingress naming a Secret the list did not hold (seen before its Secret) is read: a
    // missing Secret is no refusal (its hosts get no certificate until it exists).
    await notices.onIngress(ingress("late", "late-tls"), false);
    assert.deepEqual(
      api.seen("GET", /secrets/).map(r => r.path),
      ["/api/v1/namespaces/shop/secrets/late-tls"],
    );
    assert.equal(await refused(), 0);

    // Its Secret's event arrives with a pair that does not cover it: refused, with no read.
    await notices.onSecret(tlsSecret("shop", "late-tls", other), false);
    assert.equal(await refused(), 1);
    assert.equal(api.created("events").at(-1)?.reason, "NotServed");
    // Then the fix: judged on the event's pair, served again.
    await notices.onSecret(tlsSecret("shop", "late-tls", shop), false);
    assert.equal(await refused(), 0);
    assert.equal(api.created("events").at(-1)?.reason, "Served");
    assert.equal(api.seen("GET", /secrets/).length, 1, "only the one read");

    // Deleted: no longer held, so the next judgement reads it again.
    await notices.onSecret(tlsSecret("shop", "late-tls", other), false);
    await notices.onSecret(tlsSecret("shop", "late-tls", other), true);
    assert.equal(api.seen("GET", /secrets/).length, 2);
    assert.equal(await refused(), 0, "judged on the read (none), not the deleted pair");
  });

  it("judges again on a Secret's event exactly the Ingresses naming it now, and counts refusals exactly", async () => {
    const notices = new ServingNotices(() => ({ ...settingsScope(), classIsDefault: false }));
    const pairs = ["one", "two", "three"].map(name => tlsSecret("shop", name, shop));
    const sites = Array.from({ length: 30 }, (_, i) =>
      ingress(`site-${i}`, ["one", "two"][i % 2]!),
    );
    await notices.onList(sites, pairs);
    assert.equal(await refused(), 0);

    // "one" turns bad: its 15 users are refused, "two"'s are not.
    await notices.onSecret(tlsSecret("shop", "one", other), false);
    assert.equal(await refused(), 15);

    // site-0 moves from "one" to "three": judged on "three", no longer on "one".
    await notices.onIngress(ingress("site-0", "three"), false);
    assert.equal(await refused(), 14);
    await notices.onSecret(tlsSecret("shop", "one", shop), false);
    assert.equal(await refused(), 0);
    await notices.onSecret(tlsSecret("shop", "one", other), false);
    assert.equal(await refused(), 14, "site-0 no longer judged on one");
    await notices.onSecret(tlsSecret("shop", "three", other), false);
    assert.equal(await refused(), 15, "site-0 judged on three");

    // A deleted refused Ingress leaves the count; one in another namespace shares no Secret.
    await notices.onIngress(ingress("site-0", "three"), true);
    assert.equal(await refused(), 14);
    const elsewhere = {
      ...ingress("site-2", "one"),
      metadata: { namespace: "else", name: "site-2", uid: "uid-else" },
    };
    await notices.onList([...sites.slice(1), elsewhere], [tlsSecret("else", "one", shop)]);
    assert.equal(await refused(), 0, "the list's pairs: shop/one is not held, read, absent");
    const eventsBefore = api.created("events").length;
    await notices.onSecret(tlsSecret("else", "one", other), false);
    assert.equal(await refused(), 1, "only else/site-2");
    assert.equal(api.created("events").length, eventsBefore + 1);
    // Judged again from the slim copy the index keeps: the Event still names the Ingress's uid.
    const involved = api.created("events").at(-1)?.involvedObject as Record<string, unknown>;
    assert.deepEqual([involved.namespace, involved.uid], ["else", "uid-else"]);
  });

  it("forgets the pairs a later list no longer holds", async () => {
    const notices = new ServingNotices(() => ({ ...settingsScope(), classIsDefault: false }));
    const site = ingress("site", "gone-tls");
    await notices.onList([site], [tlsSecret("shop", "gone-tls", other)]);
    const reads = api.seen("GET", /secrets/).length;
    assert.equal(await refused(), 1);
    await notices.onList([site], []);
    assert.equal(api.seen("GET", /secrets/).length, reads + 1, "read, not taken from the old list");
    assert.equal(await refused(), 0);
  });
});
