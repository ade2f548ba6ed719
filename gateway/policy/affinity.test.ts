import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { COOKIE_AFFINITY_DEFAULTS, type CookieAffinity } from "../../core/annotations";
import { compileRoutes } from "../routing/compile";
import { Backend, findRoute, type Endpoint } from "../routing/table";
import { endpointSlice, ingress, view } from "../routing/testkit";
import { StickyChoice, stickyIndex, type StickyRandom } from "./affinity";
import { NodeHeadersFacts } from "./request-values";
import { planRequest, type ProxyPlan } from "./route-traffic";
import { parseStickyValue, type StickyValue } from "./sticky-cookie";

const P = "nginx.ingress.kubernetes.io/";
const SECRET = "6f1c7c52-2b0e-4b55-9d0c-0d4b1e6d1f3a";

const cookieOf = (mode: CookieAffinity["mode"], changeOnFailure = false): CookieAffinity => ({
  ...COOKIE_AFFINITY_DEFAULTS,
  mode,
  changeOnFailure,
});

function backendOf(count: number, key = "default/app:80"): Backend {
  const endpoints: Endpoint[] = [];
  for (let i = 1; i <= count; i++) {
    endpoints.push({ address: `10.0.0.${i}`, port: 8080, key: `10.0.0.${i}:8080` });
  }
  return new Backend(key, endpoints);
}

/** A seeded random source, so a test's sessions are the same on every run. */
function seeded(seed: number): StickyRandom {
  let state = seed;
  const next = () => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state / 2 ** 31;
  };
  return {
    nonce: () =>
      Math.floor(next() * 2 ** 31)
        .toString(16)
        .padStart(8, "0") + "00000000",
    below: count => Math.floor(next() * count),
  };
}

const REQUEST = { routePath: "/", https: false, userAgent: undefined };

/** One request: the endpoint chosen and the cookie value set (undefined when none was). */
function ask(
  backend: Backend,
  cookie: CookieAffinity,
  value: StickyValue | undefined,
  { random = seeded(7), secret = SECRET } = {},
) {
  const choice = new StickyChoice(stickyIndex(backend, secret), cookie, REQUEST, { value, random });
  const endpoint = choice.pick();
  return { endpoint, choice, set: valueOf(choice.setCookie) };
}

function valueOf(header: string | undefined): StickyValue | undefined {
  if (header === undefined) return undefined;
  const raw = /^INGRESSCOOKIE=([^;]*)/.exec(header)?.[1];
  const value = parseStickyValue(raw);
  assert.ok(value !== undefined, header);
  return value;
}

/** `sessions` new clients' cookies on a backend, with their endpoints. */
function sessions(backend: Backend, cookie: CookieAffinity, count: number) {
  const random = seeded(42);
  const all: { value: StickyValue; address: string }[] = [];
  for (let i = 0; i < count; i++) {
    const first = ask(backend, cookie, undefined, { random });
    all.push({ value: first.set!, address: first.endpoint!.address });
  }
  return all;
}

for (const mode of ["balanced", "persistent"] as const) {
  describe(`StickyChoice, ${mode}`, () => {
    const cookie = cookieOf(mode);

    it("without a cookie, picks an endpoint and sets a cookie that brings the client back to it", () => {
      const backend = backendOf(5);
      for (const { value, address } of sessions(backend, cookie, 40)) {
        const again = ask(backend, cookie, value);
        assert.equal(again.endpoint?.address, address);
        assert.equal(again.set, undefined, "no new cookie for a client that has one");
      }
    });

    it("spreads new clients over the endpoints", () => {
      const seen = new Set(sessions(backendOf(5), cookie, 100).map(s => s.address));
      assert.equal(seen.size, 5);
    });

    it("the cookie does not show the endpoint's address", () => {
      for (const { value } of sessions(backendOf(3), cookie, 10)) {
        const text = `${value.token}|${value.tag}`;
        assert.doesNotMatch(text, /10\.0\.0|8080|0a000001/);
      }
    });

    it("attack: a forged token (bad MAC, another Ingress's secret) counts as no cookie: a new endpoint of the route and a new cookie", () => {
      const backend = backendOf(4);
      const [session] = sessions(backend, cookie, 1);
      const token = session!.value.token;
      const flipped = token.slice(0, -1) + (token.endsWith("0") ? "1" : "0");
      const forged = [
        { ...session!.value, token: flipped },
        { ...session!.value, token: "0".repeat(token.length) },
      ];
      for (const value of forged) {
        const answer = ask(backend, cookie, value);
        assert.ok(backend.endpoints.includes(answer.endpoint!));
        assert.ok(answer.set !== undefined, "a new cookie");
      }
      const elsewhere = ask(backend, cookie, session!.value, { secret: "another-ingress-uid" });
      assert.ok(elsewhere.set !== undefined, "another Ingress's cookie is not taken");
    });

    it("a retry without a cookie avoids the endpoint that failed and sets the cookie for the new one", () => {
      const backend = backendOf(3);
      const choice = new StickyChoice(stickyIndex(backend, SECRET), cookie, REQUEST, {
        value: undefined,
        random: seeded(3),
      });
      const first = choice.pick()!;
      const second = choice.pick(first)!;
      assert.notEqual(second, first);
      const again = ask(backend, cookie, valueOf(choice.setCookie));
      assert.equal(again.endpoint, second);
    });

    it("a retry with a cookie goes back to its endpoint (change-on-failure false, the default)", () => {
      const backend = backendOf(3);
      const [session] = sessions(backend, cookie, 1);
      const choice = new StickyChoice(stickyIndex(backend, SECRET), cookie, REQUEST, {
        value: session!.value,
      });
      const first = choice.pick()!;
      assert.equal(choice.pick(first), first);
      assert.equal(choice.setCookie, undefined);
    });

    it("a retry with a cookie and change-on-failure picks another endpoint and a new cookie", () => {
      const backend = backendOf(3);
      const changing = cookieOf(mode, true);
      const [session] = sessions(backend, changing, 1);
      const choice = new StickyChoice(stickyIndex(backend, SECRET), changing, REQUEST, {
        value: session!.value,
        random: seeded(11),
      });
      const first = choice.pick()!;
      const second = choice.pick(first)!;
      assert.notEqual(second, first);
      assert.equal(ask(backend, changing, valueOf(choice.setCookie)).endpoint, second);
    });

    it("a backend without ready endpoints gives none (the request path answers 502)", () => {
      assert.equal(ask(backendOf(0), cookie, undefined).endpoint, undefined);
    });
  });
}

describe("StickyChoice when the Service scales", () => {
  const moved = (
    before: Backend,
    after: Backend,
    cookie: CookieAffinity,
  ): { moved: number; newCookies: number; total: number } => {
    let count = 0;
    let newCookies = 0;
    const all = sessions(before, cookie, 400);
    for (const { value, address } of all) {
      const answer = ask(after, cookie, value);
      if (answer.endpoint?.address !== address) count++;
      if (answer.set !== undefined) newCookies++;
    }
    return { moved: count, newCookies, total: all.length };
  };

  it("balanced, 4 → 8 endpoints: about half the sessions move to the new endpoints (sticky_balanced.lua: (n-c)/n), without new cookies", () => {
    const result = moved(backendOf(4), backendOf(8), cookieOf("balanced"));
    assert.ok(
      result.moved > result.total * 0.3 && result.moved < result.total * 0.7,
      JSON.stringify(result),
    );
    assert.equal(result.newCookies, 0);
  });

  it("persistent, 4 → 8 endpoints: no session moves", () => {
    const result = moved(backendOf(4), backendOf(8), cookieOf("persistent"));
    assert.equal(result.moved, 0);
    assert.equal(result.newCookies, 0);
  });

  for (const mode of ["balanced", "persistent"] as const) {
    it(`${mode}, 4 → 3 endpoints: the gone endpoint's sessions move, the others stay`, () => {
      const cookie = cookieOf(mode);
      const all = sessions(backendOf(4), cookie, 200);
      const after = backendOf(3);
      for (const { value, address } of all) {
        const answer = ask(after, cookie, value);
        if (address === "10.0.0.4") {
          assert.notEqual(answer.endpoint?.address, "10.0.0.4");
          // persistent: the cookie named the gone endpoint, so a new one is set.
          if (mode === "persistent") assert.ok(answer.set !== undefined);
        } else {
          assert.equal(answer.endpoint?.address, address);
        }
      }
    });
  }
});

describe("planRequest: affinity and canaries", () => {
  const slice = (service: string, count: number) =>
    endpointSlice({
      service,
      ports: [{ port: 80 }],
      endpoints: Array.from({ length: count }, (_, i) => ({
        address: `10.1.${service.length}.${i + 1}`,
      })),
    });
  const table = (canaryAnnotations: Record<string, string>, mainAnnotations = {}) =>
    compileRoutes(
      view(
        1,
        [
          ingress({
            name: "main",
            annotations: { [`${P}affinity`]: "cookie", ...mainAnnotations },
            rules: [{ host: "shop.test", paths: [{ path: "/", service: "main" }] }],
          }),
          ingress({
            name: "beta",
            created: "2025-01-02T00:00:00Z",
            annotations: { [`${P}canary`]: "true", ...canaryAnnotations },
            rules: [{ host: "shop.test", paths: [{ path: "/", service: "beta" }] }],
          }),
        ],
        [slice("main", 3), slice("beta", 2)],
      ),
    ).table;
  const plan = (built: ReturnType<typeof table>, cookie?: string, headers = {}) => {
    const main = findRoute(built, "shop.test", "/")!;
    const facts = new NodeHeadersFacts(
      "GET",
      "/",
      { host: "shop.test", cookie, ...headers },
      false,
    );
    const planned = planRequest(main, main.traffic!, facts);
    assert.equal(planned.kind, "proxy");
    return planned as ProxyPlan;
  };
  const cookieFrom = (planned: ProxyPlan) => {
    planned.sticky!.pick();
    const header = planned.sticky!.setCookie!;
    return header.slice(0, header.indexOf(";"));
  };

  it("sticky (the default): a client sent to the canary by weight stays on it; one sent to main stays on main", () => {
    const built = table({ [`${P}canary-weight`]: "50" });
    const seen = new Set<string>();
    for (let i = 0; i < 40; i++) {
      const first = plan(built);
      const cookie = cookieFrom(first);
      for (let again = 0; again < 5; again++) {
        const next = plan(built, cookie);
        assert.equal(next.variant, first.variant);
        assert.match(next.decision, /^affinity INGRESSCOOKIE$/);
      }
      seen.add(first.variant);
    }
    assert.deepEqual([...seen].sort(), ["canary", "main"]);
  });

  it("sticky: a main client stays on main even with the canary header (balancer.lua checks affinity first)", () => {
    const built = table({ [`${P}canary-by-header`]: "X-Beta" });
    const cookie = cookieFrom(plan(built));
    assert.equal(plan(built, cookie, { "x-beta": "always" }).variant, "main");
    assert.equal(plan(built, undefined, { "x-beta": "always" }).variant, "canary");
  });

  it("legacy: the canary has no affinity of its own, so its clients get no cookie and are decided anew", () => {
    const built = table({
      [`${P}canary-weight`]: "100",
      [`${P}affinity-canary-behavior`]: "legacy",
    });
    const first = plan(built);
    assert.equal(first.variant, "canary");
    assert.equal(first.sticky, undefined);
  });

  it("attack: a garbage or another route's cookie is no cookie: the canary rules decide", () => {
    const built = table({ [`${P}canary-weight`]: "100" });
    for (const cookie of [
      "INGRESSCOOKIE=garbage",
      "INGRESSCOOKIE=" + "a".repeat(32) + "|" + "b".repeat(16),
    ]) {
      const planned = plan(built, cookie);
      assert.equal(planned.variant, "canary");
      assert.equal(planned.decision, "weight");
    }
  });
});
