import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Ingress } from "../../core/ingress/types";
import { TlsUsersIndex } from "./tls-users";

function ingress(namespace: string, name: string, secrets: string[]): Ingress {
  return {
    metadata: { name, namespace, annotations: { a: "1" } },
    spec: { tls: secrets.map(secretName => ({ hosts: [`${name}.example.com`], secretName })) },
  };
}

const names = (list: Ingress[]) => list.map(i => i.metadata?.name).sort();

describe("TlsUsersIndex", () => {
  it("finds the Ingresses naming a Secret in its own namespace only", () => {
    const index = new TlsUsersIndex();
    index.put(ingress("shop", "web", ["web-tls", "shared"]));
    index.put(ingress("shop", "api", ["shared"]));
    index.put(ingress("blog", "web", ["shared"]));
    index.put(ingress("shop", "plain", []));
    assert.deepEqual(names(index.users("shop", "shared")), ["api", "web"]);
    assert.deepEqual(names(index.users("shop", "web-tls")), ["web"]);
    assert.deepEqual(names(index.users("blog", "shared")), ["web"]);
    assert.deepEqual(index.users("shop", "nobody"), []);
  });

  it("follows an update that stops naming a Secret, and a delete", () => {
    const index = new TlsUsersIndex();
    index.put(ingress("shop", "web", ["old-tls"]));
    index.put(ingress("shop", "web", ["new-tls"]));
    assert.deepEqual(index.users("shop", "old-tls"), []);
    assert.deepEqual(names(index.users("shop", "new-tls")), ["web"]);
    index.remove(ingress("shop", "web", []));
    assert.deepEqual(index.users("shop", "new-tls"), []);
  });

  it("keeps what the review reads, without managedFields or status", () => {
    const index = new TlsUsersIndex();
    const full = {
      ...ingress("shop", "web", ["web-tls"]),
      status: { loadBalancer: {} },
    } as Ingress & { status: unknown };
    (full.metadata as Record<string, unknown>).managedFields = [{ manager: "kubectl" }];
    full.metadata = { ...full.metadata, uid: "u-1", labels: { app: "web" } };
    index.put(full);
    const [kept] = index.users("shop", "web-tls");
    // The uid stays: an Event on the Ingress names it, and `kubectl describe` selects by it.
    assert.deepEqual(kept, {
      metadata: { name: "web", namespace: "shop", uid: "u-1", annotations: { a: "1" } },
      spec: full.spec,
    });
  });
});
