// Every canary rule of ingress-nginx and Tengine-Ingress, end to end: real Ingresses through the
// real API server (and its admission webhook), a real gateway process, real backends. For each
// row, the backend that answered must be the one the rule names.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { waitUntil } from "../../harness/wait";
import type { KubernetesObject } from "@kubernetes/client-node";
import { ingress } from "../gateway/harness";
import {
  canary,
  echoOf,
  nginx,
  openGateway,
  openNamespace,
  type Client,
  type TrafficGateway,
  type TrafficNamespace,
} from "./helpers";

/** host → the canaries on its "/" (main is Service "main"), in creation (name) order. */
const CANARIES: Record<string, [string, string, Record<string, string>][]> = {
  // ingress-nginx: "always" / "never" (stops, even before the weight) / other values fall through.
  "header.test": [
    ["header-c", "canary-a", { "canary-by-header": "X-Canary", "canary-weight": "100" }],
  ],
  "value.test": [
    [
      "value-c",
      "canary-a",
      { "canary-by-header": "X-Version", "canary-by-header-value": "v2||v3" },
    ],
  ],
  "pattern.test": [
    [
      "pattern-c",
      "canary-a",
      { "canary-by-header": "X-Build", "canary-by-header-pattern": "^beta-[0-9]+$" },
    ],
  ],
  "cookie.test": [["cookie-c", "canary-a", { "canary-by-cookie": "beta", "canary-weight": "100" }]],
  // Tengine-Ingress: value lists on cookie and query, the mod rule.
  "cookie-list.test": [
    [
      "cookie-list-c",
      "canary-a",
      { "canary-by-cookie": "tier", "canary-by-cookie-value": "gold||platinum" },
    ],
  ],
  "query.test": [
    ["query-c", "canary-a", { "canary-by-query": "ab", "canary-by-query-value": "on||yes" }],
  ],
  "mod.test": [
    [
      "mod-c",
      "canary-a",
      {
        "canary-by-query": "uid",
        "canary-mod-divisor": "10",
        "canary-mod-relational-operator": "<",
        "canary-mod-remainder": "3",
      },
    ],
  ],
  // Tengine-Ingress: several canaries; header rules, then cookie, then query, whatever their order.
  "order.test": [
    ["order-1-cookie", "canary-a", { "canary-by-cookie": "c" }],
    ["order-2-header", "canary-b", { "canary-by-header": "X-H" }],
    ["order-3-query", "canary-c", { "canary-by-query": "q" }],
  ],
  // A canary whose Service has no ready endpoint falls back to main.
  "fallback.test": [["fallback-c", "absent", { "canary-by-header": "X-Canary" }]],
  // The cap (BULWARK_MAX_CANARIES=3 here): the fourth canary on a host/path is left out.
  "cap.test": [
    ["cap-1", "canary-a", { "canary-by-header": "X-One" }],
    ["cap-2", "canary-b", { "canary-by-header": "X-Two" }],
    ["cap-3", "canary-c", { "canary-by-header": "X-Three" }],
    ["cap-4", "canary-b", { "canary-by-header": "X-Four" }],
  ],
};

type Row = [
  title: string,
  host: string,
  path: string,
  headers: Record<string, string>,
  backend: string,
];

const TABLE: Row[] = [
  ["canary-by-header always", "header.test", "/", { "x-canary": "always" }, "canary-a"],
  [
    "canary-by-header never stops before the weight",
    "header.test",
    "/",
    { "x-canary": "never" },
    "main",
  ],
  [
    "canary-by-header other value falls through to the weight (100)",
    "header.test",
    "/",
    { "x-canary": "maybe" },
    "canary-a",
  ],
  ["canary-by-header-value listed value v2", "value.test", "/", { "x-version": "v2" }, "canary-a"],
  ["canary-by-header-value listed value v3", "value.test", "/", { "x-version": "v3" }, "canary-a"],
  ["canary-by-header-value unlisted value", "value.test", "/", { "x-version": "v1" }, "main"],
  [
    "canary-by-header-value: always is no longer special",
    "value.test",
    "/",
    { "x-version": "always" },
    "main",
  ],
  ["canary-by-header-pattern match", "pattern.test", "/", { "x-build": "beta-42" }, "canary-a"],
  ["canary-by-header-pattern no match", "pattern.test", "/", { "x-build": "beta-x" }, "main"],
  ["canary-by-cookie always", "cookie.test", "/", { cookie: "a=1; beta=always" }, "canary-a"],
  [
    "canary-by-cookie never stops before the weight",
    "cookie.test",
    "/",
    { cookie: "beta=never" },
    "main",
  ],
  [
    "canary-by-cookie-value listed",
    "cookie-list.test",
    "/",
    { cookie: "tier=platinum" },
    "canary-a",
  ],
  ["canary-by-cookie-value unlisted", "cookie-list.test", "/", { cookie: "tier=silver" }, "main"],
  ["canary-by-query-value listed", "query.test", "/?ab=yes", {}, "canary-a"],
  ["canary-by-query-value unlisted", "query.test", "/?ab=no", {}, "main"],
  ["mod rule 1002 % 10 < 3", "mod.test", "/?uid=1002", {}, "canary-a"],
  ["mod rule 1005 % 10 < 3 fails", "mod.test", "/?uid=1005", {}, "main"],
  ["mod rule on a value that is not a number", "mod.test", "/?uid=abc", {}, "main"],
  [
    "order: header first, though its canary is the second",
    "order.test",
    "/?q=always",
    { "x-h": "always", cookie: "c=always" },
    "canary-b",
  ],
  ["order: cookie before query", "order.test", "/?q=always", { cookie: "c=always" }, "canary-a"],
  ["order: query last", "order.test", "/?q=always", {}, "canary-c"],
  ["order: no rule matches, no weight", "order.test", "/", {}, "main"],
  [
    "fallback: matched canary without a ready endpoint",
    "fallback.test",
    "/",
    { "x-canary": "always" },
    "main",
  ],
  ["cap: third canary serves", "cap.test", "/", { "x-three": "always" }, "canary-c"],
  ["cap: fourth canary is left out", "cap.test", "/", { "x-four": "always" }, "main"],
];

/** Weights: Tengine reads canary-weight-total from the main ingress and lets canaries share it. */
const WEIGHTS = {
  host: "weight.test",
  total: 1000,
  canaries: { "canary-a": 200, "canary-b": 300 },
};

/** Every Ingress of the table: a main ("main") and its canaries per host, and the weight host. */
function objects(ns: string): KubernetesObject[] {
  const list: KubernetesObject[] = [];
  for (const [host, canaries] of Object.entries(CANARIES)) {
    list.push(ingress(ns, `${host.split(".")[0]}-main`, { host, service: "main" }));
    for (const [name, service, annotations] of canaries) {
      list.push(canary(ns, name, { host, service, annotations }));
    }
  }
  list.push(
    ingress(ns, "weight-main", {
      host: WEIGHTS.host,
      service: "main",
      annotations: nginx({ "canary-weight-total": String(WEIGHTS.total) }),
    }),
    ...Object.entries(WEIGHTS.canaries).map(([service, weight]) =>
      canary(ns, `weight-${service}`, {
        host: WEIGHTS.host,
        service,
        annotations: { "canary-weight": String(weight) },
      }),
    ),
  );
  return list;
}

describe("canary rules end to end", () => {
  let space: TrafficNamespace;
  let served: TrafficGateway;
  let client: Client;

  before(async () => {
    space = await openNamespace("traffic-canary", ["main", "canary-a", "canary-b", "canary-c"]);
    await space.apply(objects(space.ns));
    // Started after every object exists, so its first view holds all of them.
    const env = { BULWARK_MAX_CANARIES: "3", BULWARK_ACCESS_LOG: "false" };
    served = await openGateway(space.ns, env, { host: "order.test", backend: "main" });
    client = served.client;
  });

  after(async () => {
    await served?.close();
    await space?.close();
  });

  for (const [title, host, path, headers, expected] of TABLE) {
    it(`given ${title}, ${expected} answers`, async () => {
      assert.equal(await client.backend(host, path, headers), expected);
    });
  }

  it("given weights 200 and 300 of a main total of 1000, shares 3000 requests 20/30/50 % within 5 standard deviations", async () => {
    // Each request is an independent draw, so a backend's count is Binomial(N, p): mean N·p,
    // standard deviation sqrt(N·p·(1-p)) (22 for p = 0.2, 25 for 0.3, 27 for 0.5 at N = 3000).
    // Five deviations either side fail a correct gateway with probability below 6e-7 per backend.
    const N = 3000;
    const counts = new Map<string, number>();
    for (let i = 0; i < N; i++) {
      const name = (await client.backend(WEIGHTS.host, "/")) ?? "none";
      counts.set(name, (counts.get(name) ?? 0) + 1);
    }
    const shares: [string, number][] = [
      ["canary-a", 200 / WEIGHTS.total],
      ["canary-b", 300 / WEIGHTS.total],
      ["main", 500 / WEIGHTS.total],
    ];
    for (const [name, p] of shares) {
      const mean = N * p;
      const sd = Math.sqrt(N * p * (1 - p));
      const got = counts.get(name) ?? 0;
      assert.ok(
        Math.abs(got - mean) <= 5 * sd,
        `${name}: ${got} of ${N}, expected ${mean} ± ${(5 * sd).toFixed(0)}`,
      );
    }
    assert.equal(counts.get("none"), undefined);
  });

  it("given the dyeing actions, the canary backend receives the added headers and query, the client the response header", async () => {
    const ns = space.ns;
    await space.apply([
      ingress(ns, "dye-main", { host: "dye.test", service: "main" }),
      canary(ns, "dye-c", {
        host: "dye.test",
        service: "canary-b",
        annotations: {
          "canary-by-header": "X-Dye",
          "canary-request-add-header": "X-Dyed:yes||X-Env:canary",
          "canary-request-add-query": "from=canary&env=gray",
          "canary-response-add-header": "X-Canary-Response:dyed",
        },
      }),
    ]);
    // Two objects, possibly two views: wait for the canary itself.
    await waitUntil("the dye.test canary to serve", async () =>
      (await client.backend("dye.test", "/", { "x-dye": "always" })) === "canary-b"
        ? true
        : undefined,
    );
    const answer = await client.send("dye.test", "/shop?id=7", {
      headers: { "x-dye": "always", "x-env": "prod" },
    });
    const echo = echoOf(answer);
    assert.equal(echo?.name, "canary-b");
    assert.equal(echo?.url, "/shop?id=7&from=canary&env=gray");
    assert.deepEqual([echo?.headers["x-dyed"], echo?.headers["x-env"]], ["yes", "canary"]);
    assert.equal(answer.headers["x-canary-response"], "dyed");
    const plain = await client.send("dye.test", "/shop", { headers: { "x-env": "prod" } });
    assert.deepEqual([echoOf(plain)?.name, echoOf(plain)?.headers["x-env"]], ["main", "prod"]);
    assert.equal(plain.headers["x-canary-response"], undefined);
  });
});
