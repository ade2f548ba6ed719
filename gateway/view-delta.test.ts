import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { V1EndpointSlice, V1Ingress, V1Service } from "@kubernetes/client-node";
import type { GatewayView, TlsPair } from "./view";
import { diffView, ViewReplica, wholeView } from "./view-delta";

let resourceVersion = 0;
function ingress(name: string, host: string, rv = true): V1Ingress {
  return {
    metadata: {
      namespace: "shop",
      name,
      uid: `uid-${name}`,
      ...(rv ? { resourceVersion: String(++resourceVersion) } : {}),
    },
    spec: { rules: [{ host }] },
  };
}
function slice(name: string): V1EndpointSlice {
  return {
    metadata: {
      namespace: "shop",
      name,
      uid: `uid-${name}`,
      resourceVersion: String(++resourceVersion),
    },
    addressType: "IPv4",
    endpoints: [],
  };
}
function service(name: string): V1Service {
  return { metadata: { namespace: "shop", name, resourceVersion: String(++resourceVersion) } };
}
const pair = (name: string, cert = `cert-${name}`): TlsPair => ({
  namespace: "shop",
  name,
  cert,
  key: `key-${name}`,
});

function view(version: number, parts: Partial<GatewayView> = {}): GatewayView {
  return { version, ingresses: [], tlsPairs: [], endpointSlices: [], ...parts };
}

/** Sends `views` in order through diffView to a replica; returns the replica's last view. */
function replay(views: GatewayView[]): GatewayView {
  const replica = new ViewReplica();
  let before: GatewayView | undefined;
  let last: GatewayView | undefined;
  for (const next of views) {
    const result = replica.apply(diffView(before, next));
    assert.ok(typeof result === "object", `applies at version ${next.version}`);
    assert.deepEqual(result, next, `the replica equals the view at version ${next.version}`);
    before = next;
    last = result;
  }
  return last!;
}

describe("view deltas to worker replicas", () => {
  it("given no base, sends the whole view, which the replica rebuilds as it was", () => {
    const v1 = view(1, {
      ingresses: [ingress("a", "a.test"), ingress("b", "b.test")],
      tlsPairs: [pair("t")],
      endpointSlices: [slice("s")],
      services: [service("web")],
    });
    const delta = diffView(undefined, v1);
    assert.equal(delta.base, undefined);
    assert.equal(delta.ingresses.put.length, 2);
    replay([v1]);
  });

  it("given one changed Ingress among many, sends only that one and no keys", () => {
    const many = Array.from({ length: 1000 }, (_, i) => ingress(`i-${i}`, `h${i}.test`));
    const v1 = view(1, { ingresses: many });
    const changed = [...many];
    changed[500] = ingress("i-500", "moved.test");
    const v2 = view(2, { ingresses: changed });
    const delta = diffView(v1, v2);
    assert.equal(delta.base, 1);
    assert.deepEqual(delta.ingresses.put, [changed[500]]);
    assert.equal(delta.ingresses.keys, undefined);
    assert.deepEqual([delta.tlsPairs.put, delta.endpointSlices.put], [[], []]);
    replay([v1, v2]);
  });

  it("given an unchanged object copied (as after a restart from disk), does not send it", () => {
    const a = ingress("a", "a.test");
    const copy = JSON.parse(JSON.stringify(a)) as V1Ingress;
    assert.deepEqual(
      diffView(view(1, { ingresses: [a] }), view(2, { ingresses: [copy] })).ingresses,
      {
        put: [],
      },
    );
  });

  it("given objects without resourceVersion, re-sends any that is not the same object", () => {
    const a = ingress("a", "a.test", false);
    const b = ingress("b", "b.test", false);
    const v1 = view(1, { ingresses: [a, b] });
    const v2 = view(2, { ingresses: [a, { ...b, spec: { rules: [{ host: "c.test" }] } }] });
    assert.deepEqual(diffView(v1, v2).ingresses.put, [v2.ingresses[1]]);
    replay([v1, v2]);
  });

  it("given a changed certificate under the same Secret name, sends that pair", () => {
    const v1 = view(1, { tlsPairs: [pair("t"), pair("u")] });
    const v2 = view(2, { tlsPairs: [pair("t", "rotated"), v1.tlsPairs[1]!] });
    assert.deepEqual(diffView(v1, v2).tlsPairs.put, [v2.tlsPairs[0]]);
    replay([v1, v2]);
  });

  it("given additions, removals and a new order, sends the keys and the new objects", () => {
    const [a, b, c, d] = ["a", "b", "c", "d"].map(n => ingress(n, `${n}.test`));
    const v1 = view(1, { ingresses: [a!, b!, c!] });
    const v2 = view(2, { ingresses: [c!, d!, a!] });
    const delta = diffView(v1, v2);
    assert.deepEqual(delta.ingresses, { put: [d], keys: ["shop/c", "shop/d", "shop/a"] });
    replay([v1, v2]);
  });

  it("given a key twice (which a delta cannot express), sends the whole view", () => {
    const a = ingress("a", "a.test");
    const twice = view(2, { ingresses: [a, ingress("a", "other.test")] });
    assert.equal(diffView(view(1, { ingresses: [a] }), twice).base, undefined);
    replay([view(1, { ingresses: [a] }), twice, view(3, { ingresses: [a] })]);
  });

  it("given services appearing or going, sends the whole view", () => {
    const v1 = view(1, { ingresses: [ingress("a", "a.test")] });
    const v2 = { ...v1, version: 2, services: [service("web")] };
    assert.equal(diffView(v1, v2).base, undefined);
    replay([v1, v2, view(3, { ingresses: v1.ingresses })]);
  });

  it("given a delta for another base, the replica asks for the whole view and keeps its own", () => {
    const replica = new ViewReplica();
    const v1 = view(1, { ingresses: [ingress("a", "a.test")] });
    const v2 = view(2, { ingresses: [ingress("b", "b.test")] });
    const v3 = view(3, { ingresses: [ingress("c", "c.test")] });
    assert.equal(replica.apply(diffView(v1, v2)), "resync", "no view yet");
    replica.apply(wholeView(v1));
    assert.equal(replica.apply(diffView(v2, v3)), "resync", "at 1, not 2");
    assert.equal(replica.version, 1);
    assert.deepEqual(replica.apply(wholeView(v3)), v3);
    assert.equal(replica.apply(wholeView(v3)), "stale", "the same whole view again is ignored");
    assert.equal(replica.version, 3);
  });

  it("given 200 random changes (add, remove, update, reorder, rotate), every replica view equals the primary's", () => {
    let seed = 7;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    let current = view(1, {
      ingresses: Array.from({ length: 30 }, (_, i) => ingress(`i-${i}`, `h${i}.test`)),
      tlsPairs: Array.from({ length: 5 }, (_, i) => pair(`t-${i}`)),
      endpointSlices: Array.from({ length: 10 }, (_, i) => slice(`s-${i}`)),
      services: [service("web")],
    });
    const views = [current];
    let made = 30;
    for (let version = 2; version <= 200; version++) {
      const ingresses = [...current.ingresses];
      const tlsPairs = [...current.tlsPairs];
      const endpointSlices = [...current.endpointSlices];
      switch (random(6)) {
        case 0:
          ingresses.splice(random(ingresses.length + 1), 0, ingress(`i-${made++}`, "new.test"));
          break;
        case 1:
          if (ingresses.length > 1) ingresses.splice(random(ingresses.length), 1);
          break;
        case 2: {
          const at = random(ingresses.length);
          ingresses[at] = ingress(ingresses[at]!.metadata!.name!, `v${version}.test`);
          break;
        }
        case 3:
          ingresses.reverse();
          break;
        case 4: {
          const at = random(tlsPairs.length);
          tlsPairs[at] = pair(tlsPairs[at]!.name, `cert-v${version}`);
          break;
        }
        default: {
          const at = random(endpointSlices.length);
          endpointSlices[at] = slice(endpointSlices[at]!.metadata!.name!);
        }
      }
      current = { ...current, version, ingresses, tlsPairs, endpointSlices };
      views.push(current);
    }
    replay(views);
    const deltas = views.slice(1).map((next, i) => diffView(views[i], next));
    assert.ok(
      deltas.every(d => d.base !== undefined),
      "every change went as a delta",
    );
    const sent = deltas.reduce((n, d) => n + d.ingresses.put.length, 0);
    assert.ok(sent < 200, `${sent} Ingresses sent for 199 changes, not whole views`);
  });
});

describe("view deltas carry the refusals", () => {
  it("given a refusal added then lifted, the replica's view has it, then not", () => {
    const a = ingress("a", "a.test");
    const first: GatewayView = { version: 1, ingresses: [a], tlsPairs: [], endpointSlices: [] };
    const second: GatewayView = { ...first, version: 2, refused: { "shop/a": "bad" } };
    const third: GatewayView = { ...first, version: 3, refused: {} };
    const replica = new ViewReplica();
    replica.apply(wholeView(first));
    const refused = replica.apply(diffView(first, second));
    assert.deepEqual(typeof refused === "object" && refused.refused, { "shop/a": "bad" });
    const lifted = replica.apply(diffView(second, third));
    assert.deepEqual(typeof lifted === "object" && lifted.refused, {});
  });
});
