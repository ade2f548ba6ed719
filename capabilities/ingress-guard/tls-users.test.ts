import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Ingress } from "../../core/ingress/types";
import type { V1Ingress } from "@kubernetes/client-node";
import { LeanListWatch } from "../../kube/lean-list-watch";
import { ScriptedSource } from "../../test/harness/scripted-source";
import { TlsUsersIndex, WatchedTlsUsers } from "./tls-users";

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
    index.put(full);
    const [kept] = index.users("shop", "web-tls");
    assert.deepEqual(kept, {
      metadata: { name: "web", namespace: "shop", annotations: { a: "1" } },
      spec: full.spec,
    });
  });
});

describe("WatchedTlsUsers", () => {
  it("answers nothing until a list is in: a refused first list does not count as one", async () => {
    const secret = ingress("shop", "web", ["shop-tls"]) as V1Ingress;
    const errors: unknown[] = [];
    const watched = new LeanListWatch<V1Ingress>({
      source: new ScriptedSource<V1Ingress>([
        new Error("connection refused"),
        { items: [secret], metadata: { resourceVersion: "7" } },
      ]),
    });
    watched.on("error", error => errors.push(error));
    const users = new WatchedTlsUsers(() => watched);
    assert.equal(users.users("shop", "shop-tls"), undefined, "before the list");
    // start() resolves after the refused list too, saying so only by "error".
    await new Promise(resolve => setTimeout(resolve, 10));
    assert.equal(errors.length, 1);
    assert.equal(users.users("shop", "shop-tls"), undefined, "after a refused list");
    await watched.start();
    assert.deepEqual(names(users.users("shop", "shop-tls")!), ["web"]);
  });
});
