// Cookie session affinity end to end: the real API server admits (or refuses) the annotations
// through the Pepr module, a real gateway process keeps clients on their endpoints over a Service
// whose EndpointSlices are added and removed (the Service scaling), and keeps a sticky client's
// canary decision.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { KubernetesObjectApi } from "@kubernetes/client-node";
import { ingress } from "../gateway/harness";
import { rejection, testCluster } from "../../harness/cluster";
import { waitUntil } from "../../harness/wait";
import type { Answer } from "../../../gateway/proxy/testkit";
import {
  canary,
  echoOf,
  nginx,
  openGateway,
  openNamespace,
  poolSlice,
  type TrafficGateway,
  type TrafficNamespace,
} from "./helpers";

const FIRST = ["pool-a", "pool-b", "pool-c"];
const GROWN = ["pool-d", "pool-e"];
const CLIENTS = 24;

function cookieOf(answer: Answer): string | undefined {
  const header = answer.headers["set-cookie"]?.find(v => v.startsWith("INGRESSCOOKIE="));
  return header?.slice(0, header.indexOf(";"));
}

interface Session {
  cookie: string;
  backend: string;
}

describe("session affinity end to end", () => {
  let space: TrafficNamespace;
  let served: TrafficGateway;
  const sessions = new Map<string, Session[]>();

  const slice = (name: string) => poolSlice(space.ns, name, space.backends.get(name)!.port);
  const send = async (host: string, cookie?: string) => {
    const headers: Record<string, string> = cookie === undefined ? {} : { cookie };
    const answer = await served.client.send(host, "/", { headers });
    const echo = echoOf(answer);
    assert.ok(echo !== undefined, `${host} was not proxied: ${answer.status}`);
    return { backend: echo.name, cookie: cookieOf(answer) };
  };

  before(async () => {
    space = await openNamespace("traffic-affinity", [...FIRST, ...GROWN, "beta"]);
    const ns = space.ns;
    const route = (name: string, annotations: Record<string, string>, service = "pool") =>
      ingress(ns, name, { host: `${name}.test`, service, annotations: nginx(annotations) });
    await space.apply([
      ...FIRST.map(slice),
      route("ready", {}, "pool-a"),
      route("balanced", { affinity: "cookie" }),
      route("persistent", { affinity: "cookie", "affinity-mode": "persistent" }),
      route("shop", { affinity: "cookie" }),
      canary(ns, "beta", {
        host: "shop.test",
        service: "beta",
        annotations: { "canary-weight": "50" },
      }),
    ]);
    served = await openGateway(ns, {}, { host: "ready.test", backend: "pool-a" });
    const seen = new Set<string>();
    await waitUntil("every slice of pool served", async () => {
      seen.add((await send("balanced.test")).backend);
      return seen.size === FIRST.length ? true : undefined;
    });
    for (const mode of ["balanced", "persistent"]) {
      const list: Session[] = [];
      for (let client = 0; client < CLIENTS; client++) {
        const first = await send(`${mode}.test`);
        assert.ok(first.cookie !== undefined, "a new client gets a cookie");
        list.push({ cookie: first.cookie, backend: first.backend });
      }
      sessions.set(mode, list);
    }
  });

  after(async () => {
    await served?.close();
    await space?.close();
  });

  it("each client stays on its endpoint, and the clients spread over the endpoints", async () => {
    for (const mode of ["balanced", "persistent"]) {
      const list = sessions.get(mode)!;
      for (const session of list) {
        const again = await send(`${mode}.test`, session.cookie);
        assert.equal(again.backend, session.backend);
        assert.equal(again.cookie, undefined);
      }
      assert.ok(new Set(list.map(s => s.backend)).size >= 2, mode);
    }
  });

  it("the Service grows from 3 to 5 endpoints: persistent clients stay; balanced ones move to the new endpoints only, keeping their cookies", async () => {
    await space.apply(GROWN.map(slice));
    await waitUntil("the new endpoints served", async () => {
      const { backend } = await send("persistent.test");
      return GROWN.includes(backend) ? true : undefined;
    });
    for (const session of sessions.get("persistent")!) {
      const again = await send("persistent.test", session.cookie);
      assert.equal(again.backend, session.backend);
      assert.equal(again.cookie, undefined);
    }
    let moved = 0;
    for (const session of sessions.get("balanced")!) {
      const again = await send("balanced.test", session.cookie);
      assert.equal(again.cookie, undefined);
      if (again.backend === session.backend) continue;
      moved++;
      assert.ok(GROWN.includes(again.backend), `${session.backend} → ${again.backend}`);
      session.backend = again.backend;
    }
    assert.ok(moved > 0, "consistent hashing hands the new endpoints a share of the sessions");
  });

  it("an endpoint goes: its clients get another endpoint (persistent: and a new cookie), the others stay", async () => {
    const gone = "pool-a";
    const objects = KubernetesObjectApi.makeApiClient(testCluster().kc);
    await objects.delete(slice(gone));
    const persistent = sessions.get("persistent")!;
    const witness = persistent.find(s => s.backend === gone);
    assert.ok(witness !== undefined, `a persistent client on ${gone}`);
    await waitUntil(`${gone} no longer served`, async () => {
      const again = await send("persistent.test", witness.cookie);
      return again.backend !== gone ? true : undefined;
    });
    for (const session of persistent) {
      const again = await send("persistent.test", session.cookie);
      if (session.backend === gone) {
        assert.notEqual(again.backend, gone);
        assert.ok(again.cookie !== undefined, "a new cookie names the new endpoint");
        assert.equal((await send("persistent.test", again.cookie)).backend, again.backend);
      } else {
        assert.equal(again.backend, session.backend);
        assert.equal(again.cookie, undefined);
      }
    }
    for (const session of sessions.get("balanced")!) {
      const again = await send("balanced.test", session.cookie);
      if (session.backend === gone) assert.notEqual(again.backend, gone);
      else assert.equal(again.backend, session.backend);
    }
  });

  it("a sticky client keeps its canary decision (affinity-canary-behavior sticky, the default)", async () => {
    const variants = new Set<string>();
    for (let client = 0; client < 16; client++) {
      const first = await send("shop.test");
      assert.ok(first.cookie !== undefined);
      for (let again = 0; again < 4; again++) {
        assert.equal((await send("shop.test", first.cookie)).backend, first.backend);
      }
      variants.add(first.backend === "beta" ? "canary" : "main");
    }
    assert.deepEqual([...variants].sort(), ["canary", "main"]);
  });

  it("refuses a bad affinity, and affinity on regex paths without session-cookie-path, naming each key", async () => {
    const objects = KubernetesObjectApi.makeApiClient(testCluster().kc);
    const bad = ingress(space.ns, "bad-affinity", {
      host: "bad.test",
      service: "pool",
      annotations: nginx({ affinity: "ip_hash", "affinity-mode": "sticky" }),
    });
    const message = await rejection(() => objects.create(bad));
    assert.match(message, /denied the request/);
    assert.match(
      message,
      /metadata\.annotations\["nginx\.ingress\.kubernetes\.io\/affinity"\]: expected \\?"cookie\\?", got \\?"ip_hash\\?"/,
    );
    assert.match(
      message,
      /metadata\.annotations\["nginx\.ingress\.kubernetes\.io\/affinity-mode"\]: expected \\?"balanced\\?" or \\?"persistent\\?"/,
    );
    const regex = ingress(space.ns, "regex-affinity", {
      host: "regex.test",
      service: "pool",
      path: "/app/.*",
      annotations: nginx({ affinity: "cookie", "use-regex": "true" }),
    });
    const refused = await rejection(() => objects.create(regex));
    assert.match(
      refused,
      /metadata\.annotations\["nginx\.ingress\.kubernetes\.io\/session-cookie-path"\]: expected a cookie path/,
    );
  });
});
