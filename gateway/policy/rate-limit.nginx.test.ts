// nextExcess against Debian's nginx: locations with `limit_req … burst=… nodelay` (as ingress-nginx
// renders limit-rps and limit-rpm) answer requests sent back to back on one keep-alive connection,
// fast enough that the bucket both fills and leaks between them; every answer carries nginx's own
// `$msec`, the cached time its limit_req also reads. Replaying those times through our formula must
// give the same pass/refuse for each request. nginx's limit_req clock is the monotonic one and
// `$msec` the wall clock, both taken in the same time update, so a request whose decision flips
// within 1 ms of its time is allowed to differ (and then follows nginx's decision). Sent back to
// back, every request served after the burst is served right at a boundary, so many are within
// it; none has yet differed by more.
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

function get(port: number, path: string): Promise<{ status: number; ms: number }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path, agent }, res => {
      res.resume();
      res.on("end", () => {
        const msec = String(res.headers["x-msec"]);
        resolve({ status: res.statusCode ?? 0, ms: Math.round(Number(msec) * 1000) });
      });
    });
    req.on("error", reject);
    req.end();
  });
}

/** Replays nginx's answers through nextExcess; the requests that disagree beyond the tolerance. */
function replay(rate: RequestRate, answers: { status: number; ms: number }[]) {
  let bucket: { excess: number; last: number } | undefined;
  const wrong: string[] = [];
  let near = 0;
  for (const [i, { status, ms }] of answers.entries()) {
    const passes = (t: number) => nextExcess(bucket, rate, t) <= rate.burst;
    const nginxPassed = status === 200;
    if (passes(ms) !== nginxPassed) {
      if (passes(ms - 1) !== passes(ms + 1)) near++;
      else wrong.push(`#${i} at +${ms - answers[0]!.ms} ms: nginx ${status}`);
    }
    if (!nginxPassed) continue;
    const excess = nextExcess(bucket, rate, ms);
    const moved = bucket === undefined || ms !== bucket.last;
    bucket = { excess, last: moved ? ms : bucket!.last };
  }
  return { wrong, near, passed: answers.filter(a => a.status === 200).length };
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
        add_header X-Msec $msec always;
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
      const answers = [];
      for (let i = 0; i < REQUESTS; i++) answers.push(await get(port, `/${zone.name}`));
      const rate = requestRate(zone.count, zone.per, zone.burst);
      const { wrong, near, passed } = replay(rate, answers);
      assert.deepEqual(wrong, [], `(${near} more within 1 ms of a boundary, tolerated)`);
      // The run exercised both answers.
      assert.ok(passed > zone.burst + 1 && passed < REQUESTS, `${passed} passed`);
    });
  }
});
