import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { compileRoutes, DEFAULT_COMPILE_OPTIONS } from "./compile";
import { endpointSlice, ingress, view } from "./testkit";
import { findRoute, normalizeHost } from "./table";

const P = "nginx.ingress.kubernetes.io/";

describe("compileRoutes: path matching (Kubernetes Ingress v1 table)", () => {
  const table = compileRoutes(
    view(1, [
      ingress({
        name: "paths",
        rules: [
          {
            host: "a.example.com",
            paths: [
              { path: "/", service: "root" },
              { path: "/foo", service: "foo-prefix" },
              { path: "/foo", type: "Exact", service: "foo-exact" },
              { path: "/aaa/bbb/", service: "aaa-bbb" },
              { path: "/aaa/bbb/ccc", type: "ImplementationSpecific", service: "ccc" },
              { path: "/exact/", type: "Exact", service: "exact-slash" },
            ],
          },
        ],
      }),
    ]),
  ).table;

  const cases: [string, string | undefined][] = [
    ["/", "root"],
    ["/foo", "foo-exact"],
    ["/foo/", "foo-prefix"],
    ["/foo/bar", "foo-prefix"],
    ["/foobar", "root"],
    ["/aaa/bbb", "aaa-bbb"],
    ["/aaa/bbb/", "aaa-bbb"],
    ["/aaa/bbbxyz", "root"],
    ["/aaa/bbb/ccc", "ccc"],
    ["/aaa/bbb/ccc/d", "ccc"],
    ["/aaa/bbb/cccd", "aaa-bbb"],
    ["/exact/", "exact-slash"],
    ["/exact", "root"],
    ["/foo?x=1", "foo-exact"],
  ];
  for (const [path, service] of cases) {
    it(`given ${path}, routes to ${service}`, () => {
      const route = findRoute(table, "a.example.com", path);
      assert.equal(route?.backend.key.split("/")[1]?.split(":")[0], service);
    });
  }
});

describe("compileRoutes: hosts", () => {
  const table = compileRoutes(
    view(1, [
      ingress({
        name: "hosts",
        rules: [
          { host: "exact.example.com", paths: [{ path: "/", service: "exact" }] },
          { host: "*.example.com", paths: [{ path: "/", service: "wild" }] },
          { host: "only-api.example.org", paths: [{ path: "/api", service: "api" }] },
          { paths: [{ path: "/", service: "any" }] },
        ],
      }),
    ]),
  ).table;

  const cases: [string | undefined, string, string | undefined][] = [
    ["exact.example.com", "/", "exact"],
    ["EXACT.example.com:8080", "/", "exact"],
    ["exact.example.com.", "/", "exact"],
    ["x.example.com", "/", "wild"],
    ["y.x.example.com", "/", "any"],
    ["example.com", "/", "any"],
    ["other.test", "/x", "any"],
    [undefined, "/", "any"],
    ["only-api.example.org", "/api/v1", "api"],
    // A named host whose paths do not match does not fall through to rules without host.
    ["only-api.example.org", "/", undefined],
  ];
  for (const [host, path, service] of cases) {
    it(`given host ${host} path ${path}, routes to ${service}`, () => {
      const route = findRoute(table, host, path);
      assert.equal(route?.backend.key.split("/")[1]?.split(":")[0], service);
    });
  }

  it("normalizes Host headers", () => {
    assert.equal(normalizeHost("A.B:80"), "a.b");
    assert.equal(normalizeHost("[::1]:8080"), "[::1]");
    assert.equal(normalizeHost(""), "");
  });

  it("given no route and no default backend, finds nothing", () => {
    const empty = compileRoutes(view(1, [])).table;
    assert.equal(findRoute(empty, "a", "/"), undefined);
  });
});

describe("compileRoutes: default backends and conflicts", () => {
  const compiled = compileRoutes(
    view(1, [
      ingress({
        name: "newer",
        created: "2025-02-01T00:00:00Z",
        defaultBackend: { service: "newer-default" },
        rules: [{ host: "a.test", paths: [{ path: "/x", service: "newer-x" }] }],
      }),
      ingress({
        name: "older",
        created: "2025-01-01T00:00:00Z",
        defaultBackend: { service: "older-default" },
        rules: [{ host: "a.test", paths: [{ path: "/x", service: "older-x" }] }],
      }),
      ingress({
        namespace: "b",
        name: "same-time",
        created: "2025-01-01T00:00:00Z",
        rules: [{ host: "b.test", paths: [{ path: "/", service: "b-ns" }] }],
      }),
      ingress({
        namespace: "a",
        name: "same-time",
        created: "2025-01-01T00:00:00Z",
        rules: [{ host: "b.test", paths: [{ path: "/", service: "a-ns" }] }],
      }),
      ingress({
        name: "own-default",
        created: "2025-03-01T00:00:00Z",
        defaultBackend: { service: "own-default" },
        rules: [{ host: "c.test", paths: [{ path: "/x", type: "Exact", service: "c-x" }] }],
      }),
    ]),
  );
  const service = (host: string, path: string) =>
    findRoute(compiled.table, host, path)?.backend.key.split("/")[1]?.split(":")[0];

  it("given two ingresses with the same host and path, the older serves", () => {
    assert.equal(service("a.test", "/x"), "older-x");
  });
  it("given the same creation time, namespace/name decides", () => {
    assert.equal(service("b.test", "/"), "a-ns");
  });
  it("given unknown hosts, the oldest default backend serves", () => {
    assert.equal(service("unknown.test", "/"), "older-default");
  });
  it("given a host's unmatched path, its own ingress's default backend serves", () => {
    assert.equal(service("c.test", "/y"), "own-default");
    assert.equal(service("a.test", "/y"), "older-default");
  });
  it("reports each conflict naming both ingresses", () => {
    assert.ok(
      compiled.problems.some(
        p =>
          p.startsWith("default/newer: spec.rules[0].http.paths[0]") && p.includes("default/older"),
      ),
      compiled.problems.join("\n"),
    );
    assert.ok(
      compiled.problems.some(p => p.startsWith("b/same-time:") && p.includes("a/same-time")),
    );
    assert.ok(compiled.problems.some(p => p.startsWith("default/newer: spec.defaultBackend")));
  });
});

describe("compileRoutes: endpoints", () => {
  const slices = [
    endpointSlice({
      service: "web",
      ports: [{ name: "http", port: 8080 }],
      endpoints: [
        { address: "10.0.0.2" },
        { address: "10.0.0.1", ready: true },
        { address: "10.0.0.3", ready: false },
      ],
    }),
    endpointSlice({
      service: "web",
      name: "web-second",
      ports: [{ name: "http", port: 8080 }],
      endpoints: [{ address: "10.0.0.4" }, { address: "10.0.0.1" }],
    }),
    endpointSlice({
      service: "multi",
      ports: [
        { name: "http", port: 8080 },
        { name: "admin", port: 9090 },
      ],
      endpoints: [{ address: "10.0.1.1" }],
    }),
    endpointSlice({
      namespace: "other",
      service: "web",
      ports: [{ port: 1 }],
      endpoints: [{ address: "10.9.9.9" }],
    }),
  ];
  const compiled = compileRoutes(
    view(
      1,
      [
        ingress({
          name: "e",
          rules: [
            {
              host: "e.test",
              paths: [
                { path: "/web", service: "web", port: 80 },
                { path: "/admin", service: "multi", port: "admin" },
                { path: "/by-number", service: "multi", port: 9090 },
                { path: "/missing-port", service: "multi", port: 1234 },
                { path: "/no-slice", service: "none", port: 80 },
              ],
            },
          ],
        }),
      ],
      slices,
    ),
  );
  const keys = (path: string) =>
    findRoute(compiled.table, "e.test", path)?.backend.endpoints.map(e => e.key);

  it("given a one-port service, takes ready endpoints of all its slices, once each, sorted", () => {
    assert.deepEqual(keys("/web"), ["10.0.0.1:8080", "10.0.0.2:8080", "10.0.0.4:8080"]);
  });
  it("given a port name, takes that slice port", () => {
    assert.deepEqual(keys("/admin"), ["10.0.1.1:9090"]);
  });
  it("given a port number equal to a slice port, takes it", () => {
    assert.deepEqual(keys("/by-number"), ["10.0.1.1:9090"]);
  });
  it("given a port nothing names, or no slice, the route exists with no endpoint (502)", () => {
    assert.deepEqual(keys("/missing-port"), []);
    assert.deepEqual(keys("/no-slice"), []);
  });
  it("given the Service, resolves a port number through its port name", () => {
    const withService = compileRoutes({
      ...view(
        1,
        [
          ingress({
            name: "s",
            rules: [{ host: "s.test", paths: [{ path: "/", service: "multi", port: 80 }] }],
          }),
        ],
        slices,
      ),
      services: [
        {
          metadata: { namespace: "default", name: "multi" },
          spec: { ports: [{ name: "admin", port: 80, targetPort: 9090 as unknown as object }] },
        } as never,
      ],
    });
    assert.deepEqual(
      findRoute(withService.table, "s.test", "/")?.backend.endpoints.map(e => e.key),
      ["10.0.1.1:9090"],
    );
  });
  it("round-robins across endpoints and can avoid one", () => {
    const backend = findRoute(compiled.table, "e.test", "/web")!.backend;
    const picked = [backend.pick(), backend.pick(), backend.pick(), backend.pick()].map(
      e => e?.key,
    );
    assert.deepEqual(picked, ["10.0.0.1:8080", "10.0.0.2:8080", "10.0.0.4:8080", "10.0.0.1:8080"]);
    const avoid = backend.endpoints[1]!;
    assert.notEqual(backend.pick(avoid), avoid);
  });
});

describe("compileRoutes: annotations and bad rules", () => {
  const compiled = compileRoutes(
    view(1, [
      ingress({
        name: "timeouts",
        annotations: {
          [`${P}proxy-read-timeout`]: "7",
          [`${P}proxy-connect-timeout`]: "2",
          [`${P}proxy-body-size`]: "1k",
        },
        rules: [{ host: "t.test", paths: [{ path: "/", service: "t" }] }],
      }),
      ingress({
        name: "bad-annotation",
        annotations: { [`${P}proxy-read-timeout`]: "7s", [`${P}enable-cors`]: "yes" },
        rules: [{ host: "bad.test", paths: [{ path: "/", service: "b" }] }],
      }),
      ingress({
        name: "canary",
        annotations: {
          [`${P}canary`]: "true",
          [`${P}canary-weight`]: "10",
          // Ignored on a canary: the main's 7 s applies.
          [`${P}proxy-read-timeout`]: "1",
        },
        rules: [{ host: "t.test", paths: [{ path: "/", service: "canary" }] }],
      }),
      ingress({
        name: "plain",
        rules: [{ host: "plain.test", paths: [{ path: "/", service: "p" }] }],
      }),
      ingress({
        name: "bad-host",
        rules: [
          { host: "a.*.test", paths: [{ path: "/", service: "x" }] },
          { host: "ok.test", paths: [{ path: "relative", service: "x" }] },
        ],
      }),
    ]),
  );

  it("given proxy annotations, sets the route's timeouts and body limit", () => {
    const policy = findRoute(compiled.table, "t.test", "/")!.policy;
    assert.equal(policy.readTimeoutMs, 7000);
    assert.equal(policy.connectTimeoutMs, 2000);
    assert.equal(policy.sendTimeoutMs, 60000);
    assert.equal(policy.bodyLimit, 1024);
    assert.equal(policy.tries, 3);
  });
  it("given invalid annotations, keeps the route in place answering 503, never served weakened", () => {
    const route = findRoute(compiled.table, "bad.test", "/")!;
    assert.match(route.refusal ?? "", /proxy-read-timeout/);
    assert.equal(route.backend.endpoints.length, 0);
    assert.match(route.traffic?.refusal ?? "", /proxy-read-timeout/);
    assert.ok(
      compiled.problems.some(
        p =>
          p.startsWith("default/bad-annotation: metadata: not served (503)") &&
          p.includes("proxy-read-timeout"),
      ),
    );
  });
  it("given a canary ingress, attaches it to the main route and compiles the route's traffic policy", () => {
    const route = findRoute(compiled.table, "t.test", "/");
    assert.equal(route?.ingress, "default/timeouts");
    assert.deepEqual(
      route?.canaries.map(c => c.ingress),
      ["default/canary"],
    );
    assert.equal(route?.canaries[0]?.annotations?.canary?.enabled, true);
    assert.deepEqual(
      route?.traffic?.group?.canaries.map(c => [c.id, c.weight]),
      [["default/canary", 10]],
    );
    assert.ok(!compiled.problems.some(p => p.startsWith("default/canary:")));
  });
  it("given a route without traffic annotations, compiles no policy for it", () => {
    assert.equal(findRoute(compiled.table, "plain.test", "/")?.traffic, undefined);
  });
  it("given a canary, applies its main's proxy settings to it (ingress-nginx: inherited)", () => {
    const route = findRoute(compiled.table, "t.test", "/")!;
    assert.equal(route.canaries[0]?.policy.readTimeoutMs, 7000);
    assert.equal(route.canaries[0]?.policy.bodyLimit, 1024);
  });
  it("given a bad host or path, reports the field", () => {
    assert.ok(compiled.problems.some(p => p.startsWith("default/bad-host: spec.rules[0].host")));
    assert.ok(
      compiled.problems.some(p => p.startsWith("default/bad-host: spec.rules[1].http.paths[0]")),
    );
  });
  it("counts hosts and routes", () => {
    // ok.test stays a known host (its only path was bad): it answers 404, not the rules without host.
    assert.equal(compiled.table.stats.hosts, 4);
    assert.equal(compiled.table.stats.routes, 3);
  });
});

describe("compileRoutes: canaries without a main ingress", () => {
  it("reports them and serves nothing for them", () => {
    const compiled = compileRoutes(
      view(1, [
        ingress({
          name: "lonely",
          annotations: { [`${P}canary`]: "true", [`${P}canary-weight`]: "50" },
          rules: [{ host: "lonely.test", paths: [{ path: "/", service: "x" }] }],
        }),
      ]),
    );
    assert.equal(findRoute(compiled.table, "lonely.test", "/"), undefined);
    assert.match(
      compiled.problems[0] ?? "",
      /^default\/lonely: spec\.rules\[0\]\.http\.paths\[0\]: canary for host "lonely\.test" path "\/" has no main ingress/,
    );
  });
});

describe("compileRoutes: traffic policy", () => {
  const canary = (name: string, created: string) =>
    ingress({
      name,
      created,
      annotations: { [`${P}canary`]: "true", [`${P}canary-weight`]: "10" },
      rules: [{ host: "c.test", paths: [{ path: "/", service: name }] }],
    });

  it("given more canaries than the cap, keeps the oldest and reports the rest by field", () => {
    const compiled = compileRoutes(
      view(1, [
        ingress({
          name: "main",
          rules: [{ host: "c.test", paths: [{ path: "/", service: "m" }] }],
        }),
        canary("c1", "2025-01-02T00:00:00Z"),
        canary("c2", "2025-01-03T00:00:00Z"),
        canary("c3", "2025-01-04T00:00:00Z"),
      ]),
      { ...DEFAULT_COMPILE_OPTIONS, maxCanaries: 2 },
    );
    const route = findRoute(compiled.table, "c.test", "/");
    assert.deepEqual(
      route?.canaries.map(c => c.ingress),
      ["default/c1", "default/c2"],
    );
    assert.match(
      compiled.problems.join("\n"),
      /^default\/c3: spec\.rules\[0\]\.http\.paths\[0\]: host "c\.test" path "\/" already has 2 canaries \(the cap\); ignored$/m,
    );
  });

  it("given use-regex on one ingress, matches every non-Exact path of the host as a case-insensitive regex, longest first", () => {
    const compiled = compileRoutes(
      view(1, [
        ingress({
          name: "regex",
          annotations: { [`${P}rewrite-target`]: "/$2" },
          rules: [{ host: "r.test", paths: [{ path: "/api(/|$)(.*)", service: "api" }] }],
        }),
        ingress({
          name: "plain",
          rules: [{ host: "r.test", paths: [{ path: "/", service: "web" }] }],
        }),
      ]),
    );
    assert.equal(findRoute(compiled.table, "r.test", "/API/users")?.ingress, "default/regex");
    assert.equal(findRoute(compiled.table, "r.test", "/api")?.ingress, "default/regex");
    assert.equal(findRoute(compiled.table, "r.test", "/other")?.ingress, "default/plain");
    assert.ok(findRoute(compiled.table, "r.test", "/api/x")?.traffic?.rewrite !== undefined);
  });

  it("given a use-regex path that does not compile, reports the path", () => {
    const compiled = compileRoutes(
      view(1, [
        ingress({
          name: "broken",
          annotations: { [`${P}use-regex`]: "true" },
          rules: [{ host: "b.test", paths: [{ path: "/a(", service: "x" }] }],
        }),
      ]),
    );
    assert.match(
      compiled.problems.join("\n"),
      /default\/broken: spec\.rules\[0\]\.http\.paths\[0\]: path "\/a\(" is not a valid regular expression/,
    );
  });

  it("given another Ingress's prefix path that is no valid regex on a regex host, leaves out that route only, naming it", () => {
    // ingress-nginx would fail the whole configuration; it threw here, for every host.
    const compiled = compileRoutes(
      view(1, [
        ingress({
          name: "regex",
          annotations: { [`${P}use-regex`]: "true" },
          rules: [{ host: "r.test", paths: [{ path: "/api/.*", service: "api" }] }],
        }),
        ingress({
          name: "plain",
          rules: [
            {
              host: "r.test",
              paths: [
                { path: "/a(b", service: "web" },
                { path: `/${"x".repeat(600)}`, service: "web" },
                { path: "/ok", service: "web" },
              ],
            },
          ],
        }),
        ingress({
          name: "other",
          rules: [{ host: "o.test", paths: [{ path: "/", service: "o" }] }],
        }),
      ]),
    );
    assert.deepEqual(compiled.problems, [
      `default/plain: path "/${"x".repeat(99)}…" is not served on host "r.test": another Ingress makes the host's paths regular expressions (use-regex), and as one it is 602 characters long, more than the 512 a pattern may have`,
      'default/plain: path "/a(b" is not served on host "r.test": another Ingress makes the host\'s paths regular expressions (use-regex), and as one it is not valid RE2 (error parsing regexp: missing closing ): `(?i)^/a(b`)',
    ]);
    assert.equal(findRoute(compiled.table, "r.test", "/api/x")?.ingress, "default/regex");
    assert.equal(findRoute(compiled.table, "r.test", "/ok/1")?.ingress, "default/plain");
    assert.equal(findRoute(compiled.table, "r.test", "/a(b"), undefined);
    assert.equal(findRoute(compiled.table, "o.test", "/x")?.ingress, "default/other");
  });

  it("given a rewrite-target Ingress with an Exact path that is no regex, leaves out that route (the compile threw)", () => {
    const compiled = compileRoutes(
      view(1, [
        ingress({
          name: "rewrite",
          annotations: { [`${P}rewrite-target`]: "/" },
          rules: [
            {
              host: "w.test",
              paths: [
                { path: "/a(b", type: "Exact", service: "web" },
                { path: "/ok", type: "Exact", service: "web" },
              ],
            },
          ],
        }),
      ]),
    );
    assert.deepEqual(compiled.problems, [
      'default/rewrite: spec.rules[0].http.paths[0]: path "/a(b" is not a valid regular expression (use-regex, rewrite-target)',
    ]);
    assert.equal(findRoute(compiled.table, "w.test", "/ok")?.ingress, "default/rewrite");
  });

  it("given a route whose traffic policy throws, refuses that route (503) and reports it, and compiles the rest", () => {
    // A stand-in for a check missed upstream (as the rewrite of an Exact path that is no regex
    // was): reading the rate-limit options throws.
    const traffic = {
      ...DEFAULT_COMPILE_OPTIONS.traffic,
      get limits(): undefined {
        throw new Error("missed check");
      },
    };
    const compiled = compileRoutes(
      view(1, [
        ingress({
          name: "throws",
          rules: [{ host: "t.test", paths: [{ path: "/", service: "web" }] }],
        }),
      ]),
      { ...DEFAULT_COMPILE_OPTIONS, traffic },
    );
    assert.deepEqual(compiled.problems, [
      'default/throws: host "t.test" path "/" answers 503: its traffic policy did not compile: missed check',
    ]);
    const route = findRoute(compiled.table, "t.test", "/");
    assert.equal(route?.traffic?.refusal, "its traffic policy did not compile: missed check");
  });

  it("given a path too costly for its regex host's patterns, answers it with the host's 414 route, never a route further down", () => {
    // Ten paths of 1 010 instructions: a random 8 KiB path against them held a worker 2.5 s.
    const hostile = (k: number) => `/${k}?(a|b)*a[ab]{1000}c`;
    const compiled = compileRoutes(
      view(1, [
        ingress({
          name: "regex",
          annotations: { [`${P}use-regex`]: "true" },
          rules: [
            {
              host: "r.test",
              paths: [
                ...Array.from({ length: 10 }, (_, k) => ({ path: hostile(k), service: "web" })),
                { path: "/api/[a-z]+", service: "api" },
              ],
            },
          ],
        }),
        ingress({
          name: "open",
          rules: [{ host: "r.test", paths: [{ path: "/", service: "open" }] }],
        }),
      ]),
    );
    const long = `/${"ab".repeat(4096)}`;
    const refused = findRoute(compiled.table, "r.test", long);
    assert.equal(refused?.ingress, "");
    assert.equal(refused?.traffic?.refusalAnswer?.status, 414);
    assert.match(
      refused?.traffic?.refusal ?? "",
      /^the path is too long for the regular-expression routes of host "r\.test"/,
    );
    // Short paths afford every pattern: they route as before.
    assert.equal(findRoute(compiled.table, "r.test", "/api/users")?.ingress, "default/regex");
    assert.equal(findRoute(compiled.table, "r.test", "/other")?.ingress, "default/open");
  });

  it("given an Ingress's prefix paths on another's regex host, charges their compiles to its own budget", () => {
    // Each path compiles to 72 000 instructions, some 90 ms: without the budget every one was
    // compiled, in every worker, on every compile of the host.
    const hostile = (k: number) => `/${k}${"a{1000}".repeat(72)}`;
    const compiled = compileRoutes(
      view(1, [
        ingress({
          name: "regex",
          annotations: { [`${P}use-regex`]: "true" },
          rules: [{ host: "r.test", paths: [{ path: "/api/.*", service: "api" }] }],
        }),
        ingress({
          name: "plain",
          rules: [
            {
              host: "r.test",
              paths: [1, 2, 3, 4].map(k => ({ path: hostile(k), service: "web" })),
            },
          ],
        }),
        ingress({
          name: "neighbour",
          rules: [{ host: "r.test", paths: [{ path: "/shop", service: "shop" }] }],
        }),
      ]),
    );
    const left = (k: number, why: string) =>
      `default/plain: path "${hostile(k).slice(0, 100)}…" is not served on host "r.test": another Ingress makes the host's paths regular expressions (use-regex), and as one it ${why}`;
    assert.deepEqual(compiled.problems, [
      left(
        1,
        "compiles to 72005 RE2 instructions, more than the 5000 a pattern may have (each request runs them; spell out fewer repetitions)",
      ),
      ...[2, 3, 4].map(k =>
        left(
          k,
          "would bring its Ingress's regular expressions past 50000 RE2 instructions together",
        ),
      ),
    ]);
    assert.equal(findRoute(compiled.table, "r.test", "/shop/x")?.ingress, "default/neighbour");
    assert.equal(findRoute(compiled.table, "r.test", "/api/x")?.ingress, "default/regex");
  });

  it("given disable-robots, serves /robots.txt of the host from an Exact route of the ingress", () => {
    const compiled = compileRoutes(
      view(1, [
        ingress({
          name: "quiet",
          annotations: { [`${P}disable-robots`]: "true" },
          rules: [{ host: "q.test", paths: [{ path: "/app", service: "x" }] }],
        }),
      ]),
    );
    const robots = findRoute(compiled.table, "q.test", "/robots.txt");
    assert.equal(robots?.kind, "Exact");
    assert.equal(robots?.traffic?.robots?.disableRobots, true);
  });

  it("given TLS for the host, redirects plain HTTP by default, and not when ssl-redirect is false", () => {
    const compiled = compileRoutes(
      view(1, [
        ingress({
          name: "secure",
          rules: [{ host: "s.test", paths: [{ path: "/", service: "x" }] }],
          tls: [{ hosts: ["s.test"], secretName: "s" }],
        }),
        ingress({
          name: "opt-out",
          annotations: { [`${P}ssl-redirect`]: "false" },
          rules: [{ host: "o.test", paths: [{ path: "/", service: "x" }] }],
          tls: [{ hosts: ["o.test"], secretName: "o" }],
        }),
      ]),
    );
    assert.equal(findRoute(compiled.table, "s.test", "/")?.traffic?.redirectHttp, true);
    assert.equal(findRoute(compiled.table, "o.test", "/")?.traffic, undefined);
  });
});

describe("compileRoutes: what is not served", () => {
  // Oldest first: each broken one is older than the main it could have shadowed.
  const at = (minute: number) => `2026-01-01T00:${String(minute).padStart(2, "0")}:00Z`;
  const compiled = compileRoutes({
    ...view(1, [
      ingress({
        name: "broken-canary",
        created: at(1),
        // "True" is a canary (ParseBool); the weight does not parse.
        annotations: { [`${P}canary`]: "True", [`${P}canary-weight`]: "lots" },
        rules: [{ host: "c.test", paths: [{ path: "/", service: "canary" }] }],
      }),
      ingress({
        name: "odd-canary",
        created: at(2),
        // Not one of ParseBool's spellings: still never a main.
        annotations: { [`${P}canary`]: "yes" },
        rules: [{ host: "c.test", paths: [{ path: "/", service: "canary" }] }],
      }),
      ingress({
        name: "main",
        created: at(3),
        rules: [
          { host: "c.test", paths: [{ path: "/", service: "main" }] },
          { host: "s.test", paths: [{ path: "/", service: "main" }] },
        ],
      }),
      ingress({
        name: "walled",
        created: at(0),
        annotations: { [`${P}configuration-snippet`]: "deny all;" },
        rules: [{ host: "s.test", paths: [{ path: "/admin", service: "admin" }] }],
      }),
      ingress({
        name: "unreviewed",
        created: at(0),
        rules: [{ host: "r.test", paths: [{ path: "/", service: "r" }] }],
      }),
    ]),
    refused: { "default/unreviewed": "spec.tls[0].secretName: Secret x cannot be served" },
  });

  it("given a canary whose annotations fail to parse, serves it as nothing, not as a main", () => {
    const route = findRoute(compiled.table, "c.test", "/")!;
    assert.equal(route.ingress, "default/main");
    assert.equal(route.refusal, undefined);
    assert.deepEqual(route.canaries, []);
    assert.ok(
      compiled.problems.some(p =>
        p.startsWith("default/broken-canary: metadata: canary not served"),
      ),
    );
    assert.ok(
      compiled.problems.some(p => p.startsWith("default/odd-canary: metadata: canary not served")),
    );
  });

  it("given an unsupported security annotation, answers 503 on its path; the shorter prefix does not catch it", () => {
    const admin = findRoute(compiled.table, "s.test", "/admin/users")!;
    assert.equal(admin.ingress, "default/walled");
    assert.match(admin.refusal ?? "", /configuration-snippet.*security control/);
    assert.equal(findRoute(compiled.table, "s.test", "/shop")?.ingress, "default/main");
  });

  it("given the control side's refusal, answers 503 where the Ingress stands", () => {
    assert.match(findRoute(compiled.table, "r.test", "/")?.refusal ?? "", /cannot be served/);
  });
});

describe("compileRoutes: ssl-redirect per host, as ingress-nginx", () => {
  const compiled = compileRoutes(
    view(1, [
      ingress({
        name: "web",
        rules: [{ host: "shop.test", paths: [{ path: "/", service: "web" }] }],
        tls: [{ hosts: ["shop.test"], secretName: "shop-tls" }],
      }),
      // Lists no TLS of its own: the host's certificate still redirects its path.
      ingress({
        name: "api",
        rules: [{ host: "shop.test", paths: [{ path: "/api", service: "api" }] }],
      }),
      ingress({
        name: "hooks",
        annotations: { [`${P}ssl-redirect`]: "false" },
        rules: [{ host: "shop.test", paths: [{ path: "/hooks", service: "hooks" }] }],
      }),
      ingress({
        name: "plain",
        annotations: { [`${P}ssl-redirect`]: "true" },
        rules: [{ host: "plain.test", paths: [{ path: "/", service: "p" }] }],
      }),
    ]),
  );
  const redirects = (host: string, path: string) =>
    findRoute(compiled.table, host, path)?.traffic?.redirectHttp ?? false;

  it("redirects every path of a host with a certificate, whichever Ingress lists the TLS", () => {
    assert.equal(redirects("shop.test", "/"), true);
    assert.equal(redirects("shop.test", "/api/orders"), true);
  });
  it("lets an Ingress of the host turn it off for its own paths only", () => {
    assert.equal(redirects("shop.test", "/hooks/x"), false);
  });
  it("does not redirect a host without a certificate, even with ssl-redirect true", () => {
    assert.equal(redirects("plain.test", "/"), false);
  });
});

describe("compileRoutes: Tengine's canary-referrer", () => {
  const views = view(1, [
    ingress({ name: "main", rules: [{ host: "r.test", paths: [{ path: "/", service: "main" }] }] }),
    ingress({
      name: "release",
      annotations: {
        [`${P}canary`]: "true",
        [`${P}canary-weight`]: "10",
        [`${P}canary-referrer`]: "release-bot",
      },
      rules: [{ host: "r.test", paths: [{ path: "/", service: "canary" }] }],
    }),
  ]);
  it("attaches a canary whose referrer is allowed, and ignores it otherwise", () => {
    const allowed = compileRoutes(views, {
      ...DEFAULT_COMPILE_OPTIONS,
      canaryReferrers: ["release-bot"],
    });
    assert.equal(findRoute(allowed.table, "r.test", "/")?.canaries.length, 1);
    const refused = compileRoutes(views);
    assert.equal(findRoute(refused.table, "r.test", "/")?.canaries.length, 0);
    assert.ok(
      refused.problems.some(p => p.includes("canary-referrer") && p.includes("not served")),
    );
  });
});

describe("compileRoutes: load balancing", () => {
  const compiled = compileRoutes(
    view(1, [
      ingress({
        name: "main",
        annotations: { [`${P}load-balance`]: "ewma" },
        rules: [{ host: "lb.test", paths: [{ path: "/", service: "m" }] }],
      }),
      ingress({
        name: "hashed-canary",
        annotations: {
          [`${P}canary`]: "true",
          [`${P}canary-weight`]: "10",
          [`${P}upstream-hash-by`]: "$remote_addr",
          [`${P}upstream-hash-by-subset`]: "true",
        },
        rules: [{ host: "lb.test", paths: [{ path: "/", service: "c" }] }],
      }),
      ingress({
        name: "hashed",
        annotations: { [`${P}upstream-hash-by`]: "$request_uri", [`${P}load-balance`]: "ewma" },
        rules: [{ host: "hash.test", paths: [{ path: "/", service: "h" }] }],
      }),
      ingress({
        name: "ewma-only",
        annotations: { [`${P}load-balance`]: "ewma" },
        rules: [{ host: "ewma.test", paths: [{ path: "/", service: "e" }] }],
      }),
    ]),
  );

  it("given upstream-hash-by, hashes (over load-balance) and compiles a policy so requests carry facts", () => {
    const route = findRoute(compiled.table, "hash.test", "/")!;
    assert.deepEqual(route.policy.balance, {
      kind: "hash",
      by: [{ kind: "request_uri" }],
      subsetSize: undefined,
    });
    assert.equal(route.traffic?.hashed, true);
  });

  it("given load-balance ewma alone, needs no per-request policy", () => {
    const route = findRoute(compiled.table, "ewma.test", "/")!;
    assert.deepEqual(route.policy.balance, { kind: "ewma" });
    assert.equal(route.traffic, undefined);
  });

  it("given a canary with its own upstream-hash-by, keeps it (ingress-nginx: not inherited)", () => {
    const route = findRoute(compiled.table, "lb.test", "/")!;
    assert.deepEqual(route.policy.balance, { kind: "ewma" });
    assert.deepEqual(route.canaries[0]?.policy.balance, {
      kind: "hash",
      by: [{ kind: "remote_addr" }],
      subsetSize: 3,
    });
    assert.equal(route.traffic?.hashed, true);
  });
});
