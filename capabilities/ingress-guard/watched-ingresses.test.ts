import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Ingress } from "../../core/ingress/types";
import type { ListWatch } from "../../kube/list-watch";
import { ScriptedClient } from "../../test/harness/scripted-client";
import { waitUntil } from "../../test/harness/wait";
import { ingressListWatch, WatchedIngresses } from "./watched-ingresses";

function ingress(name: string, host: string, secrets: string[]): Ingress {
  return {
    metadata: { name, namespace: "shop" },
    spec: {
      rules: [{ host }],
      tls: secrets.map(secretName => ({ hosts: [host], secretName })),
    },
  };
}

const names = (list: Ingress[] | undefined) => list?.map(i => i.metadata?.name).sort();

describe("WatchedIngresses", () => {
  it("answers nothing until a list is in (a refused first list does not count as one), then feeds both indexes", async () => {
    const client = new ScriptedClient<Ingress>([
      new Error("connection refused"),
      {
        items: [
          ingress("web", "shop.example.com", ["shop-tls"]),
          ingress("api", "shop.example.com", []),
        ],
        metadata: { resourceVersion: "7" },
      },
    ]);
    const backoff = { durationMs: 100, factor: 1, jitter: 0, steps: 10, capMs: 100 };
    let listWatch: ListWatch<Ingress> | undefined;
    const watched = new WatchedIngresses(
      (feed, who) => (listWatch = ingressListWatch(feed, who, { client, reflector: { backoff } })),
    );
    assert.equal(watched.usersOf("shop", "shop-tls"), undefined, "before the list");
    assert.equal(watched.onHost("shop.example.com", ""), undefined, "before the list");
    await waitUntil("the refused list", () => client.lists.length === 1);
    await new Promise(resolve => setImmediate(resolve));
    assert.equal(watched.usersOf("shop", "shop-tls"), undefined, "after a refused list");
    const listed = await waitUntil("the list again", () => watched.usersOf("shop", "shop-tls"));
    assert.deepEqual(names(listed), ["web"]);
    assert.deepEqual(names(watched.onHost("shop.example.com", "shop/web")), ["api"]);
    assert.equal(client.lists.length, 2);
    await listWatch?.stop();
  });
});
