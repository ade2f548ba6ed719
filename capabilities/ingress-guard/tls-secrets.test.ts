import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { V1Secret } from "@kubernetes/client-node";
import { ListWatch } from "../../kube/list-watch";
import { ScriptedClient } from "../../test/harness/scripted-client";
import { waitUntil } from "../../test/harness/wait";
import type { Secret } from "../../core/ingress/types";
import { pairOf, tlsSecretListWatch, TlsPairIndex, WatchedTlsPairs } from "./tls-secrets";

const b64 = (text: string): string => Buffer.from(text).toString("base64");

function secret(namespace: string, name: string, cert: string, type = "kubernetes.io/tls") {
  return {
    apiVersion: "v1",
    kind: "Secret",
    type,
    metadata: { namespace, name, resourceVersion: "1" },
    data: { "tls.crt": b64(cert), "tls.key": b64(`key of ${cert}`) },
  } satisfies V1Secret;
}

describe("TlsPairIndex", () => {
  it("holds each TLS Secret's pair decoded, by namespace and name", () => {
    const index = new TlsPairIndex();
    index.put(secret("shop", "web-tls", "shop cert"));
    index.put(secret("blog", "web-tls", "blog cert"));
    assert.deepEqual(index.get("shop", "web-tls"), {
      certPem: "shop cert",
      keyPem: "key of shop cert",
    });
    assert.equal(index.get("blog", "web-tls")?.certPem, "blog cert");
    assert.equal(index.get("shop", "other"), undefined);
  });

  it("follows an update and a delete; a Secret of another type is not held", () => {
    const index = new TlsPairIndex();
    index.put(secret("shop", "web-tls", "first"));
    index.put(secret("shop", "web-tls", "second"));
    assert.equal(index.get("shop", "web-tls")?.certPem, "second");
    index.put(secret("shop", "web-tls", "opaque now", "Opaque"));
    assert.equal(index.get("shop", "web-tls"), undefined);
    index.put(secret("shop", "web-tls", "third"));
    index.remove(secret("shop", "web-tls", ""));
    assert.equal(index.get("shop", "web-tls"), undefined);
    assert.equal(index.size, 0);
  });

  it("reads a Secret with no data as an empty pair (the inspection names what is missing)", () => {
    assert.deepEqual(pairOf({}), { certPem: "", keyPem: "" });
  });
});

describe("WatchedTlsPairs", () => {
  it("holds nothing until its list is in, then what the list and the watch deliver", async () => {
    const source = new ScriptedClient<Secret>([
      { items: [secret("shop", "web-tls", "listed")], metadata: { resourceVersion: "5" } },
    ]);
    let listWatch: ListWatch<Secret> | undefined;
    const pairs = new WatchedTlsPairs(
      (feed, who) => (listWatch = tlsSecretListWatch(feed, who, { client: source })),
    );
    // The first question starts the watch; undefined sends the caller to the API server.
    assert.equal(pairs.pair("shop", "web-tls"), undefined);
    await waitUntil("the watch", () => source.watches.length > 0);
    assert.equal(pairs.pair("shop", "web-tls")?.certPem, "listed");
    assert.equal(source.lists[0]?.fieldSelector, "type=kubernetes.io/tls", "the list: TLS only");
    assert.equal(source.current.query.fieldSelector, "type=kubernetes.io/tls", "the watch too");
    const events = source.current;
    events.send("MODIFIED", {
      ...secret("shop", "web-tls", "renewed"),
      metadata: { namespace: "shop", name: "web-tls", resourceVersion: "6" },
    });
    assert.equal(pairs.pair("shop", "web-tls")?.certPem, "renewed");
    events.send("DELETED", {
      ...secret("shop", "web-tls", ""),
      metadata: { namespace: "shop", name: "web-tls", resourceVersion: "7" },
    });
    assert.equal(pairs.pair("shop", "web-tls"), undefined);
    await listWatch?.stop();
  });
});
