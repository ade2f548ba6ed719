import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { V1EndpointSlice, V1Ingress } from "@kubernetes/client-node";
import { compileRoutes } from "./compile";
import { seededRandom as random } from "../../test/harness/generate";
import { endpointSlice, ingress, view, type IngressSpec } from "./testkit";
import {
  ANY_HOST,
  closeOver,
  fingerprint,
  IncrementalRoutes,
  Index,
  indexIngress,
  problemOwner,
} from "./incremental";
import { findRoute, type HostRoutes, type Route, type RouteTable } from "./table";

/** A table as plain data: what a request can observe, Backend objects by key and endpoints. */
function shape(table: RouteTable): unknown {
  const route = (r: Route | undefined): unknown =>
    r && {
      ingress: r.ingress,
      host: r.host,
      path: r.path,
      kind: r.kind,
      match: r.match,
      backend: `${r.backend.key} ${r.backend.endpoints.map(e => e.key).join(",")}`,
      policy: r.policy,
      canaries: r.canaries.map(c => route(c)),
    };
  const host = (h: HostRoutes | undefined): unknown =>
    h && {
      exact: [...(h.exact?.values() ?? [])].map(route),
      prefixes: h.prefixes.map(route),
      regex: h.regex?.map(r => [r.pattern.source, route(r.route)]),
      fallback: route(h.fallback),
      rest: Object.keys(h).sort(),
    };
  const hosts = (m: ReadonlyMap<string, HostRoutes>) =>
    [...m.keys()].sort().map(k => [k, host(m.get(k))]);
  return {
    version: table.version,
    exact: hosts(table.exactHosts),
    wildcard: hosts(table.wildcardHosts),
    any: host(table.anyHost),
    stats: table.stats,
  };
}

const HOSTS = ["a.test", "b.test", "c.test", "d.test", "*.test", "x.a.test", ""];
const SERVICES = ["web", "api", "shop"];
// Some no valid regex, for hosts a use-regex Ingress makes regex.
const PATHS = ["/", "/api", "/api/v1", "/shop", "/v[0-9]+", "/a(b"];

function randomAnnotations(next: () => number): Record<string, string> | undefined {
  const roll = next();
  if (roll < 0.15) return { "nginx.ingress.kubernetes.io/canary": "true" };
  if (roll < 0.25) return { "nginx.ingress.kubernetes.io/use-regex": "true" };
  if (roll < 0.35)
    return { "nginx.ingress.kubernetes.io/proxy-read-timeout": String(1 + Math.floor(next() * 9)) };
  return undefined;
}

function randomIngress(next: () => number, name: string, rv: number): V1Ingress {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!;
  const rules: NonNullable<IngressSpec["rules"]> = [];
  const ruleCount = 1 + Math.floor(next() * 2);
  for (let r = 0; r < ruleCount; r++) {
    rules.push({
      host: pick(HOSTS) || undefined,
      paths: [
        { path: pick(PATHS), type: next() < 0.3 ? "Exact" : "Prefix", service: pick(SERVICES) },
      ],
    });
  }
  const spec: IngressSpec = {
    name,
    created: new Date(Date.UTC(2025, 0, 1) + Math.floor(next() * 5) * 1000).toISOString(),
    rules,
    defaultBackend: next() < 0.1 ? { service: pick(SERVICES) } : undefined,
    annotations: randomAnnotations(next),
  };
  const made = ingress(spec);
  made.metadata = { ...made.metadata, uid: name, resourceVersion: String(rv) };
  return made;
}

function slices(next: () => number, rv: number): V1EndpointSlice[] {
  return SERVICES.map(service => {
    const made = endpointSlice({
      service,
      ports: [{ name: "http", port: 8080 }],
      endpoints: [{ address: `10.0.0.${1 + Math.floor(next() * 3)}` }],
    });
    made.metadata = { ...made.metadata, resourceVersion: String(rv) };
    return made;
  });
}

describe("IncrementalRoutes: the same table and problems as a full compile", () => {
  for (const seed of [1, 2, 3, 4, 5, 6]) {
    it(`given 60 random changes (seed ${seed}), matches compileRoutes after each`, () => {
      const next = random(seed);
      let rv = 1;
      const current = new Map<string, V1Ingress>();
      for (let i = 0; i < 12; i++) current.set(`ing-${i}`, randomIngress(next, `ing-${i}`, rv++));
      let currentSlices = slices(next, rv++);
      const incremental = new IncrementalRoutes();
      let modes = "";
      for (let step = 1; step <= 60; step++) {
        const roll = next();
        const name = `ing-${Math.floor(next() * 16)}`;
        if (roll < 0.15) current.delete(name);
        else if (roll < 0.25) currentSlices = slices(next, rv++);
        else if (roll < 0.9) current.set(name, randomIngress(next, name, rv++));
        const v = view(step, [...current.values()], currentSlices);
        const full = compileRoutes(v);
        const got = incremental.compile(v);
        const want = { ...(shape(full.table) as object) };
        const fullStats = new IncrementalRoutes().compile(v).table.stats;
        (want as { stats: unknown }).stats = fullStats;
        assert.deepEqual(shape(got.table), want, `step ${step}`);
        assert.deepEqual([...got.problems].sort(), [...full.problems].sort(), `step ${step}`);
        modes += incremental.lastMode === "incremental" ? "i" : "f";
      }
      assert.match(modes, /i/, "some changes were compiled incrementally");
    });
  }
});

describe("IncrementalRoutes at scale", () => {
  const many = (n: number, rv: number): V1Ingress[] =>
    Array.from({ length: n }, (_, i) => {
      const made = ingress({
        name: `site-${i}`,
        rules: [{ host: `site-${i}.example.com`, paths: [{ path: "/", service: "blue" }] }],
      });
      made.metadata = { ...made.metadata, uid: `u${i}`, resourceVersion: String(rv + i) };
      return made;
    });
  const blue = [
    endpointSlice({ service: "blue", ports: [{ port: 1 }], endpoints: [{ address: "10.0.0.1" }] }),
  ];

  it("given one new Ingress among 2000, recompiles only it and serves the rest unchanged", () => {
    const incremental = new IncrementalRoutes();
    const base = many(2000, 1);
    const first = incremental.compile(view(1, base, blue));
    assert.equal(incremental.lastMode, "full");
    const added = ingress({
      name: "probe",
      rules: [{ host: "probe.example.com", paths: [{ path: "/", service: "blue" }] }],
    });
    const second = incremental.compile(view(2, [...base, added], blue));
    assert.equal(incremental.lastMode, "incremental");
    assert.equal(incremental.lastRecompiled, 1);
    assert.equal(second.table.version, 2);
    assert.equal(findRoute(second.table, "probe.example.com", "/")?.ingress, "default/probe");
    assert.equal(second.table.stats.hosts, 2001);
    assert.equal(second.table.stats.routes, 2001);
    // Untouched hosts are the very same immutable objects; the old table is unchanged.
    assert.equal(
      second.table.exactHosts.get("site-7.example.com"),
      first.table.exactHosts.get("site-7.example.com"),
    );
    assert.equal(first.table.exactHosts.has("probe.example.com"), false);
  });

  it("given a changed EndpointSlice, recompiles the Ingresses of its Service only", () => {
    const incremental = new IncrementalRoutes();
    const green = endpointSlice({
      service: "green",
      ports: [{ port: 2 }],
      endpoints: [{ address: "10.0.0.2" }],
    });
    const base = [
      ...many(100, 1),
      ingress({ name: "g", rules: [{ host: "g.test", paths: [{ path: "/", service: "green" }] }] }),
    ];
    incremental.compile(view(1, base, [...blue, green]));
    const moved = { ...green, endpoints: [{ addresses: ["10.0.0.9"] }] };
    moved.metadata = { ...green.metadata, resourceVersion: "2" };
    const table = incremental.compile(view(2, base, [...blue, moved])).table;
    assert.equal(incremental.lastRecompiled, 1);
    assert.deepEqual(
      findRoute(table, "g.test", "/")?.backend.endpoints.map(e => e.key),
      ["10.0.0.9:2"],
    );
  });

  it("given an Ingress refused (its Secret went bad), recompiles it alone, then serves it again", () => {
    const incremental = new IncrementalRoutes();
    const base = many(100, 1);
    incremental.compile(view(1, base, blue));
    const refused = { "default/site-7": "spec.tls[0].secretName: Secret s cannot be served" };
    const table = incremental.compile({ ...view(2, base, blue), refused }).table;
    assert.equal(incremental.lastRecompiled, 1);
    assert.match(findRoute(table, "site-7.example.com", "/")?.refusal ?? "", /cannot be served/);
    assert.equal(findRoute(table, "site-8.example.com", "/")?.refusal, undefined);
    const again = incremental.compile(view(3, base, blue)).table;
    assert.equal(incremental.lastRecompiled, 1);
    assert.equal(findRoute(again, "site-7.example.com", "/")?.refusal, undefined);
  });

  it("given a change touching more than the share, compiles in full", () => {
    const incremental = new IncrementalRoutes({ maxShare: 0.25 });
    incremental.compile(view(1, many(8, 1), blue));
    incremental.compile(view(2, many(8, 100), blue));
    assert.equal(incremental.lastMode, "full");
  });
});

describe("index helpers", () => {
  it("indexes rule hosts, the any-host key for a default backend, and backend Services", () => {
    const indexed = indexIngress(
      ingress({
        name: "i",
        namespace: "ns",
        defaultBackend: { service: "fallback" },
        rules: [
          { host: "a.test", paths: [{ path: "/", service: "web" }] },
          { host: "*.b.test", paths: [{ path: "/", service: "web" }] },
        ],
      }),
    );
    assert.deepEqual(indexed.hosts, [ANY_HOST, "a.test", "*.b.test"]);
    assert.deepEqual([...indexed.services].sort(), ["ns/fallback", "ns/web"]);
  });

  it("fingerprints by uid and resourceVersion, or by content without them", () => {
    assert.equal(fingerprint({ metadata: { uid: "u", resourceVersion: "7" } }), "u@7");
    assert.equal(fingerprint({ metadata: {} }), '{"metadata":{}}');
  });

  it("closes the set over shared hosts, and gives up past the limit", () => {
    const rule = (host: string) => ({ host, paths: [{ path: "/", service: "web" }] });
    const index = new Index();
    index.update(
      view(1, [
        ingress({ name: "one", rules: [rule("a.test"), rule("b.test")] }),
        ingress({ name: "two", rules: [rule("b.test"), rule("c.test")] }),
        ingress({ name: "three", rules: [rule("d.test")] }),
      ]),
    );
    assert.deepEqual([...(closeOver(index, new Set(["a.test"]), 10) ?? [])].sort(), [
      "default/one",
      "default/two",
    ]);
    assert.equal(closeOver(index, new Set(["a.test"]), 1), undefined);
  });

  it("reports the hosts of an Ingress before and after a change, and of a removed one", () => {
    const rule = (host: string) => ({ host, paths: [{ path: "/", service: "web" }] });
    const index = new Index();
    const kept = ingress({ name: "kept", rules: [rule("kept.test")] });
    const gone = ingress({ name: "gone", rules: [rule("gone.test")] });
    index.update(view(1, [kept, gone, ingress({ name: "i", rules: [rule("old.test")] })]));
    const hosts = index.update(view(2, [kept, ingress({ name: "i", rules: [rule("new.test")] })]));
    assert.deepEqual([...hosts].sort(), ["gone.test", "new.test", "old.test"]);
    assert.deepEqual([...(index.byHost.get("new.test") ?? [])], ["default/i"]);
    assert.equal(index.byHost.has("old.test"), false);
  });

  it("reports the hosts routing to a Service whose EndpointSlice changed", () => {
    const rule = (host: string, service: string) => ({ host, paths: [{ path: "/", service }] });
    const ings = [
      ingress({ name: "w", rules: [rule("w.test", "web")] }),
      ingress({ name: "a", rules: [rule("a.test", "api")] }),
    ];
    const slice = (address: string) =>
      endpointSlice({ service: "web", ports: [{ port: 1 }], endpoints: [{ address }] });
    const index = new Index();
    index.update(view(1, ings, [slice("10.0.0.1")]));
    assert.deepEqual([...index.update(view(2, ings, [slice("10.0.0.2")]))], ["w.test"]);
    assert.deepEqual([...index.update(view(3, ings, [slice("10.0.0.2")]))], []);
  });

  it("reads the Ingress a problem names", () => {
    assert.equal(problemOwner("ns/a-1: spec.rules[0].host: bad"), "ns/a-1");
  });
});
