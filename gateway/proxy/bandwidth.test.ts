// limit-rate over real sockets: a paced response never runs ahead of limit-rate-after plus
// limit-rate × the time since the request was sent (the client's clock starts before the
// gateway's, so slowness anywhere only keeps it further behind), and it arrives whole. The fast
// path hands a paced request's connection to Node's path, mid keep-alive too.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Agent } from "node:http";
import { startDataPlane, type DataPlane } from "../data-plane";
import { ask, fetchWithProgress, hostsView, startBackend, type Backend } from "./testkit";

const P = "nginx.ingress.kubernetes.io/";
const KIB = 1024;
const RATE = 16 * KIB;
const AFTER = 8 * KIB;
const BODY = Buffer.alloc(40 * KIB, 0);
for (let i = 0; i < BODY.length; i++) BODY[i] = (i * 31 + 7) & 0xff;

/** The most limit-rate lets out by `ms`, plus one slice the schedule lets go when it is due. */
const allowed = (ms: number) => AFTER + (RATE * ms) / 1000 + RATE / 10;

describe("data plane: limit-rate paces responses", () => {
  let backend: Backend;
  let plane: DataPlane;

  before(async () => {
    backend = await startBackend((req, res) => {
      req.resume();
      res.end(BODY);
    });
    plane = await startDataPlane({ httpPort: 0, host: "127.0.0.1", defaultCertificates: [] });
    await plane.apply(
      hostsView("app", backend.port, {
        paced: { [`${P}limit-rate`]: "16", [`${P}limit-rate-after`]: "8" },
        free: {},
      }),
    );
  });
  after(async () => {
    await plane.close({ drainMs: 200 });
    await backend.close();
  });

  it("never sends more than limit-rate-after + limit-rate × elapsed, and sends it all", async () => {
    const { body, progress } = await fetchWithProgress(plane.httpPort, "paced.test", false);
    assert.ok(body.equals(BODY), "the body arrives whole and in order");
    for (const { ms, bytes } of progress) {
      assert.ok(bytes <= allowed(ms), `${bytes} bytes by ${ms.toFixed(0)} ms`);
    }
    // The last bytes were due (40 - 8) KiB / 16 KiB/s = 2 s after the start.
    assert.ok(progress.at(-1)!.ms >= 2000 - RATE / 10 / (RATE / 1000));
  });

  it("paces a request on a kept-alive connection that began on the fast path", async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const first = await ask(plane.httpPort, "free.test", "/", { agent });
      assert.equal(first.body.length, BODY.length);
      const paced = await fetchWithProgress(plane.httpPort, "paced.test", agent);
      assert.ok(paced.body.equals(BODY));
      for (const { ms, bytes } of paced.progress) assert.ok(bytes <= allowed(ms));
      const again = await ask(plane.httpPort, "free.test", "/", { agent });
      assert.equal(again.status, 200);
      assert.equal(again.localPort, first.localPort, "the same connection served all three");
    } finally {
      agent.destroy();
    }
  });
});
