import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { KubeObject, ReflectorSink } from "../../kube/reflector";
import { ObjectCache, type Change } from "./cache";
import { watchTargets } from "./resources";

/** A complete list of one page, as the reflector hands it on. */
function list(sink: ReflectorSink, items: KubeObject[]): void {
  sink.listPage(items, true);
  sink.listed();
}

const object = (namespace: string, name: string, rv: string) => ({
  metadata: { namespace, name, resourceVersion: rv },
});

describe("ObjectCache", () => {
  it("reports each real change once; an unchanged relist reports nothing", () => {
    const changes: Change[] = [];
    const cache = new ObjectCache(c => changes.push(c));
    const sink = cache.sink("ingress", undefined);
    list(sink, [object("a", "x", "1"), object("b", "y", "2")]);
    list(sink, [object("a", "x", "1"), object("b", "y", "2")]);
    sink.upsert(object("a", "x", "3"));
    sink.remove(object("b", "y", "2"));
    sink.remove(object("b", "y", "2"));
    assert.deepEqual(
      changes.map(c => `${c.key}:${c.object?.metadata?.resourceVersion ?? "gone"}`),
      ["a/x:1", "b/y:2", "a/x:3", "b/y:gone"],
    );
  });

  it("a namespaced relist removes only that namespace's missing objects", () => {
    const cache = new ObjectCache(() => {});
    list(cache.sink("secret", "a"), [object("a", "x", "1")]);
    list(cache.sink("secret", "b"), [object("b", "y", "1")]);
    list(cache.sink("secret", "a"), []);
    assert.deepEqual([...cache.map("secret").keys()], ["b/y"]);
  });

  it("takes a list in whole once its last page is in; a list that began again drops the first try's pages", () => {
    const changes: string[] = [];
    let listed = 0;
    const cache = new ObjectCache(c => changes.push(`${c.key}:${c.object ? "put" : "gone"}`));
    const sink = cache.sink("ingress", undefined, () => listed++);
    list(sink, [object("a", "x", "1"), object("a", "old", "1")]);
    changes.length = 0;
    // A relist whose first try failed after one page (holding "y"), then began again.
    sink.listPage([object("a", "y", "2")], true);
    sink.listPage([object("a", "x", "1")], true);
    assert.deepEqual(changes, [], "nothing before the list is complete");
    sink.listPage([object("a", "z", "3")], false);
    sink.listed();
    assert.deepEqual(changes, ["a/z:put", "a/old:gone"]);
    assert.equal(listed, 2);
  });
});

describe("watchTargets", () => {
  it("watches cluster-wide without namespaces, per namespace with them, TLS Secrets only", () => {
    assert.deepEqual(
      watchTargets("ingress", []).map(t => t.spec.path),
      ["/apis/networking.k8s.io/v1/ingresses"],
    );
    assert.deepEqual(
      watchTargets("secret", ["a", "b"]).map(t => [t.spec.path, t.spec.query?.fieldSelector]),
      [
        ["/api/v1/namespaces/a/secrets", "type=kubernetes.io/tls"],
        ["/api/v1/namespaces/b/secrets", "type=kubernetes.io/tls"],
      ],
    );
    assert.deepEqual(
      watchTargets("ingressClass", ["a"]).map(t => t.spec.path),
      ["/apis/networking.k8s.io/v1/ingressclasses"],
    );
    assert.deepEqual(
      watchTargets("ingressChecksum", ["guard"]).map(t => t.spec.path),
      ["/apis/tengine.taobao.org/v1/namespaces/guard/ingresschecksums"],
    );
  });
});
