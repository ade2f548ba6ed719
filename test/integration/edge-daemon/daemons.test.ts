// Seven real edge-health daemons (local processes, one loopback address each) against the real
// API server: healthy group, a killed daemon, a 4|3 partition (iptables), forged and replayed
// messages. Check period 1 s.
import assert from "node:assert/strict";
import http from "node:http";
import { after, before, describe, it } from "node:test";
import { EDGE_HEALTH_ANNOTATION } from "../../../core/names";
import { waitUntil } from "../../../hack/control-plane/kube";
import { newNonce, signResult, type SignedResult } from "../../../edge-health-daemon/signing";
import { testCluster, testNamespace, type TestCluster } from "../../harness/cluster";
import {
  startEdgeDaemons,
  type DaemonView,
  type EdgeDaemonGroup,
} from "../../harness/edge-daemons";

const N = 7;
const PERIOD = 1;

async function annotation(cluster: TestCluster, name: string): Promise<string | undefined> {
  const node = await cluster.core.readNode({ name });
  return node.metadata?.annotations?.[EDGE_HEALTH_ANNOTATION];
}

async function annotations(cluster: TestCluster, names: string[]): Promise<(string | undefined)[]> {
  return Promise.all(names.map(n => annotation(cluster, n)));
}

async function waitFor(
  what: string,
  check: () => Promise<boolean>,
  timeoutMs = 30_000,
): Promise<void> {
  await waitUntil(
    what,
    async () => {
      if (!(await check())) throw new Error(`not yet: ${what}`);
      return true;
    },
    timeoutMs,
  );
}

/** PUT a body to a daemon from `localAddress`; returns status and reply. */
function put(
  url: string,
  body: unknown,
  localAddress: string,
): Promise<{ status: number; reason?: string }> {
  const data = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${url}/result`,
      {
        method: "PUT",
        localAddress,
        headers: { "content-type": "application/json", "content-length": Buffer.byteLength(data) },
      },
      res => {
        let text = "";
        res.on("data", (c: Buffer) => (text += c.toString()));
        res.on("end", () => {
          const reply = JSON.parse(text) as { reason?: string };
          resolve({ status: res.statusCode ?? 0, reason: reply.reason });
        });
      },
    );
    req.on("error", reject);
    req.end(data);
  });
}

function summary(view: DaemonView, names: string[]): string {
  const short = (n: string): string => `n${names.indexOf(n)}`;
  const rows = view.targets.map(
    t =>
      `${short(t.target)}:${t.decision ?? "none"}(yes ${t.yes.length}/no ${t.no.length}/need ${t.needed})`,
  );
  return `${short(view.node)} sees ${rows.join(" ")}`;
}

describe("edge-health daemons: 7 processes on loopback, real API server", () => {
  const cluster = testCluster();
  let namespace = "";
  let cleanupNamespace: () => Promise<void> = async () => {};
  let group: EdgeDaemonGroup;
  let names: string[] = [];

  before(async () => {
    [namespace, cleanupNamespace] = await testNamespace(cluster, "edge-daemon");
    group = await startEdgeDaemons({ cluster, namespace, count: N, periodSeconds: PERIOD });
    names = group.names;
  });

  after(async () => {
    await group?.close();
    await cleanupNamespace();
  });

  it("all healthy: every node is voted node-health=true", async () => {
    await waitFor("all 7 nodes voted true", async () =>
      (await annotations(cluster, names)).every(v => v === "true"),
    );
    const view = await group.view(0);
    assert.equal(view.members.length, N);
    for (const t of view.targets) {
      assert.equal(t.decision, "true", `${t.target}: ${t.reason}`);
      assert.equal(
        t.electorate,
        N,
        "7 nodes ≤ max-probe-peers+1: all-pairs, the whole group votes",
      );
    }
  });

  it("a forged, a replayed, a stale and a wrongly-sourced message are rejected", async () => {
    const sender = names[1] ?? "";
    const from = group.ips[1] ?? "";
    const to = group.url(0);
    const body = (now = Date.now()): SignedResult =>
      signResult(
        {
          sender,
          timestamp: now,
          nonce: newNonce(),
          checkedAt: now,
          results: Object.fromEntries(names.map(n => [n, true])),
        },
        group.key,
      );
    const forged = { ...body(), results: { [names[6] ?? ""]: false } };
    assert.deepEqual(await put(to, forged, from), { status: 401, reason: "bad-signature" });
    const wrongKey = signResult({ ...body() }, Buffer.from("not-the-shared-key-at-all"));
    assert.deepEqual(await put(to, wrongKey, from), { status: 401, reason: "bad-signature" });

    const genuine = body();
    assert.equal((await put(to, genuine, from)).status, 200, "a genuine message is accepted");
    assert.deepEqual(await put(to, genuine, from), { status: 409, reason: "replayed" });

    const old = Date.now() - 10_000; // --message-max-age=5
    const stale = signResult({ ...body(), timestamp: old, checkedAt: old }, group.key);
    assert.deepEqual(await put(to, stale, from), { status: 422, reason: "stale" });

    assert.deepEqual(await put(to, body(), "127.0.0.1"), { status: 403, reason: "wrong-source" });
    const stats = (await group.view(0)).stats;
    assert.equal(stats.rejected["bad-signature"], 2);
    assert.equal(stats.rejected.replayed, 1);
  });

  it("a killed daemon's node is voted false within two check periods", async () => {
    // The lowest-named node: before it dies it is the writer of every decision (all-pairs: every
    // node checks every node), so this also shows the next one (n1) taking over in time.
    const victim = 0;
    const writer = 1;
    const before = (await group.view(writer)).round;
    await group.kill(victim);
    await waitFor(
      "the killed node voted false",
      async () => (await annotation(cluster, names[victim] ?? "")) === "false",
    );
    const t = (await group.view(writer)).targets.find(x => x.target === names[victim]);
    assert.equal(t?.decision, "false", t?.reason);
    assert.ok(t?.decidedRound !== undefined);
    const periods = t.decidedRound - before;
    console.log(
      `[edge-daemon] killed daemon decided "false" after ${periods} of the writer's check periods (${t.reason})`,
    );
    assert.ok(periods <= 2, `decided ${periods} check periods after the kill`);
    assert.deepEqual(
      (await annotations(cluster, names.slice(1))).filter(v => v !== "true"),
      [],
      "the live nodes stay true",
    );

    await group.restart(victim);
    await waitFor(
      "the restarted node voted true again",
      async () => (await annotation(cluster, names[victim] ?? "")) === "true",
    );
  });

  it("a 3|4 partition: the majority half votes the minority false; the minority writes nothing", async () => {
    // The three lowest-named nodes in the minority: n0 was the writer of everything before the cut.
    const minority = [0, 1, 2];
    const majority = [3, 4, 5, 6];
    const writesBefore = await Promise.all(
      minority.map(async i => (await group.view(i)).stats.writes),
    );
    group.partition(majority, minority);
    try {
      await waitFor("the minority half voted false by the majority", async () =>
        (
          await annotations(
            cluster,
            minority.map(i => names[i] ?? ""),
          )
        ).every(v => v === "false"),
      );
      // Wait until the minority's old rows from the majority have expired (vote timeout 3 s), so
      // its view is its own: then it must hold no decision at all.
      await waitFor("the minority half holds no majority on anyone", async () => {
        const views = await Promise.all(minority.map(i => group.view(i)));
        return views.every(v =>
          v.targets.every(t => t.yes.length + t.no.length <= minority.length),
        );
      });
      await new Promise(r => setTimeout(r, 3 * PERIOD * 1000));
      const majorityViews = await Promise.all(majority.map(i => group.view(i)));
      const minorityViews = await Promise.all(minority.map(i => group.view(i)));
      for (const v of [...majorityViews, ...minorityViews])
        console.log(`[edge-daemon] ${summary(v, names)}`);

      for (const v of majorityViews) {
        for (const t of v.targets) {
          const expected = majority.includes(names.indexOf(t.target)) ? "true" : "false";
          assert.equal(t.decision, expected, `majority view of ${t.target}: ${t.reason}`);
        }
      }
      for (const v of minorityViews) {
        for (const t of v.targets) {
          assert.equal(t.decision, undefined, `minority view of ${t.target}: ${t.reason}`);
          assert.ok(t.yes.length < 4 && t.no.length < 4);
        }
      }
      assert.deepEqual(
        await annotations(
          cluster,
          majority.map(i => names[i] ?? ""),
        ),
        ["true", "true", "true", "true"],
        "no healthy majority node is voted unhealthy by the minority",
      );
      assert.deepEqual(
        await annotations(
          cluster,
          minority.map(i => names[i] ?? ""),
        ),
        ["false", "false", "false"],
        "the minority never writes itself back to true",
      );
      const writesAfter = await Promise.all(
        minority.map(async i => (await group.view(i)).stats.writes),
      );
      assert.deepEqual(writesAfter, writesBefore, "the minority half wrote nothing");
    } finally {
      group.heal();
    }
    await waitFor("all nodes voted true after the partition heals", async () =>
      (await annotations(cluster, names)).every(v => v === "true"),
    );
  });
});
