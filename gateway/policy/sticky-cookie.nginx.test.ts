// cookieTime against Debian's nginx: ingress-nginx writes session-cookie-expires with
// ngx.cookie_time, which is nginx's ngx_http_cookie_time; nginx's userid module writes its
// cookie's expires with the same function, from the same cached time as `$msec`. For each
// userid_expires below, the expires nginx wrote must equal cookieTime(⌊$msec⌋ + seconds),
// including past 2037 (four-digit years) and nginx's own "max".
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureNginx, nginxConfig, startNginx, stopNginx } from "../../hack/nginx";
import { freePort } from "../../hack/control-plane/ports";
import { cookieTime } from "./sticky-cookie";

// Seconds, and "max" (nginx: 2145916555, Thu, 31-Dec-37 23:55:55 GMT).
const EXPIRES = ["1", "172800", "259200", "631152000", "2000000000", "max"];

function get(port: number, path: string): Promise<{ cookie: string; msec: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path }, res => {
      res.resume();
      res.on("end", () =>
        resolve({
          cookie: String(res.headers["set-cookie"]?.[0] ?? ""),
          msec: String(res.headers["x-msec"]),
        }),
      );
    });
    req.on("error", reject);
    req.end();
  });
}

describe("cookieTime against nginx's ngx_http_cookie_time (userid_expires)", () => {
  let dir: string;
  let nginx: ChildProcess;
  let port: number;

  before(async () => {
    ensureNginx();
    dir = mkdtempSync(join(tmpdir(), "cookie-time-"));
    port = await freePort();
    const locations = EXPIRES.map(
      (expires, i) =>
        `location = /${i} { userid on; userid_name uid; userid_expires ${expires}; add_header X-Msec $msec; return 200 "ok"; }`,
    ).join("\n");
    const server = `server { listen 127.0.0.1:${port}; ${locations} }`;
    nginx = await startNginx(dir, "cookie-time", nginxConfig(dir, 1, server));
  });

  after(async () => {
    if (nginx !== undefined) await stopNginx(nginx);
    rmSync(dir, { recursive: true, force: true });
  });

  for (const [i, expires] of EXPIRES.entries()) {
    it(`userid_expires ${expires}`, async () => {
      const { cookie, msec } = await get(port, `/${i}`);
      const written = /expires=([^;]+)/.exec(cookie)?.[1];
      assert.ok(written !== undefined, cookie);
      const now = Math.floor(Number(msec));
      const seconds = expires === "max" ? 2145916555 - now : Number(expires);
      assert.equal(cookieTime(now + seconds), written);
    });
  }
});
