// nextExcess against Debian's nginx: locations with `limit_req … burst=… nodelay` (as ingress-nginx
// renders limit-rps and limit-rpm) answer requests sent back to back on one keep-alive connection,
// fast enough that the bucket both fills and leaks between them. Every answer carries nginx's
// `$connection_time`: the monotonic time limit_req itself read for that request, less the
// connection's start. Replaying those times through our formula must give the same pass/refuse
// for every request, exactly.
//
// (`$msec`, which this test read before, is the wall clock: nginx truncates it and the monotonic
// clock to milliseconds separately, so its steps differ from limit_req's by ±1 ms, and where the
// bucket empties on one clock and not the other the two buckets part for good. CI once failed on
// two such requests, at +528 and +573 ms, nowhere near a boundary of their own.)
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { ChildProcess } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { Agent, request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureNginx, nginxConfig, startNginx, stopNginx } from "../../hack/nginx";
import { freePort } from "../../hack/control-plane/ports";
import { nextExcess, requestRate, type RequestRate } from "./rate-limit";

interface Zone {
  name: string;
  count: number;
  per: "s" | "m";
  burst: number;
}

const ZONES: Zone[] = [
  { name: "rps", count: 400, per: "s", burst: 2 },
  { name: "rpm", count: 7000, per: "m", burst: 3 },
  { name: "slow", count: 100, per: "s", burst: 5 },
];

const REQUESTS = 1500;

const agent = new Agent({ keepAlive: true, maxSockets: 1 });

interface Answer {
  status: number;
  /** limit_req's clock for this request: ms since the connection was accepted. */
  ms: number;
  /** nginx's serial number of the connection that carried it. */
  connection: string;
}

function get(port: number, path: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path, agent }, res => {
      res.resume();
      res.on("end", () => {
        // "%T.%03M": seconds, then milliseconds.
        const [seconds, millis] = String(res.headers["x-connection-time"]).split(".");
        resolve({
          status: res.statusCode ?? 0,
          ms: Number(seconds) * 1000 + Number(millis),
          connection: String(res.headers["x-connection"]),
        });
      });
    });
    req.on("error", reject);
    req.end();
  });
}

/** Replays nginx's answers through nextExcess; the requests decided otherwise. */
function replay(rate: RequestRate, answers: Answer[]) {
  let bucket: { excess: number; last: number } | undefined;
  const wrong: string[] = [];
  for (const [i, { status, ms }] of answers.entries()) {
    const excess = nextExcess(bucket, rate, ms);
    const nginxPassed = status === 200;
    if (excess <= rate.burst !== nginxPassed) {
      wrong.push(`#${i} at +${ms - answers[0]!.ms} ms: nginx ${status}, excess ${excess}`);
    }
    if (!nginxPassed) continue;
    // As nginx: the time moves on only when it has (a leak below one request is kept).
    bucket = { excess, last: bucket === undefined || ms !== bucket.last ? ms : bucket.last };
  }
  return { wrong, passed: answers.filter(a => a.status === 200).length };
}

describe("limit_req arithmetic against nginx", () => {
  const dir = mkdtempSync(join(tmpdir(), "bulwark-limit-req-"));
  let port = 0;
  let nginx: ChildProcess | undefined;

  before(async () => {
    ensureNginx();
    chmodSync(dir, 0o755);
    writeFileSync(join(dir, "ok.txt"), "ok", { mode: 0o644 });
    port = await freePort();
    const zones = ZONES.map(
      z => `limit_req_zone $binary_remote_addr zone=${z.name}:1m rate=${z.count}r/${z.per};`,
    );
    // A file, not `return`: return answers in the rewrite phase, before limit_req runs.
    const locations = ZONES.map(
      z => `location = /${z.name} {
        limit_req zone=${z.name} burst=${z.burst} nodelay;
        add_header X-Connection-Time $connection_time always;
        add_header X-Connection $connection always;
        alias ${join(dir, "ok.txt")};
      }`,
    );
    const http = `${zones.join("\n")}
      limit_req_status 503;
      server { listen 127.0.0.1:${port}; keepalive_requests 100000; ${locations.join("\n")} }`;
    nginx = await startNginx(dir, "limit-req", nginxConfig(dir, 1, http));
  });

  after(async () => {
    agent.destroy();
    if (nginx) await stopNginx(nginx);
    rmSync(dir, { recursive: true, force: true });
  });

  for (const zone of ZONES) {
    it(`refuses the same requests as nginx's rate=${zone.count}r/${zone.per} burst=${zone.burst} nodelay`, async () => {
      const answers: Answer[] = [];
      for (let i = 0; i < REQUESTS; i++) answers.push(await get(port, `/${zone.name}`));
      // The times are per connection: all of them must come from one.
      assert.deepEqual(new Set(answers.map(a => a.connection)).size, 1, "connections");
      const rate = requestRate(zone.count, zone.per, zone.burst);
      const { wrong, passed } = replay(rate, answers);
      assert.deepEqual(wrong, []);
      // The run exercised both answers.
      assert.ok(passed > zone.burst + 1 && passed < REQUESTS, `${passed} passed`);
    });
  }
});
