// Basic authentication against Debian's nginx: one htpasswd file of generated users, each with a
// hash made by Apache's htpasswd or `openssl passwd` (bcrypt, apr1, {SHA}, {SSHA}, {PLAIN}, $1$,
// $5$, $6$ with and without rounds), plus lines nginx skips or cannot match; nginx's
// `auth_basic_user_file` answers every (user, password) and Authorization spelling, and Bulwark's
// reading of the same file and header must let exactly the same requests through.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { ChildProcess } from "node:child_process";
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { Agent, request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureNginx, nginxConfig, startNginx, stopNginx } from "../../hack/nginx";
import { freePort } from "../../hack/control-plane/ports";
import { parseBasicCredentials, parseUserFile, passwordMatches } from "./htpasswd";

const agent = new Agent({ keepAlive: true, maxSockets: 4 });

function status(port: number, authorization: string | undefined): Promise<number> {
  return new Promise((resolve, reject) => {
    const headers = authorization === undefined ? {} : { authorization };
    const req = request({ host: "127.0.0.1", port, path: "/ok", agent, headers }, res => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("error", reject);
    req.end();
  });
}

const htpasswd = (flags: string[], password: string): string =>
  execFileSync("htpasswd", ["-nb", ...flags, "u", password], { encoding: "utf8" })
    .trim()
    .slice(2);

const openssl = (flag: string, password: string): string =>
  execFileSync("openssl", ["passwd", flag, "-stdin"], {
    input: `${password}\n`,
    encoding: "utf8",
  }).trim();

function ssha(password: string, salt: string): string {
  const digest = createHash("sha1").update(password).update(salt).digest();
  return `{SSHA}${Buffer.concat([digest, Buffer.from(salt)]).toString("base64")}`;
}

// Each hash kind: how to make it from a password.
const KINDS: [string, (password: string) => string][] = [
  ["bcrypt", p => htpasswd(["-B", "-C", "4"], p)],
  ["bcrypt-2b", p => htpasswd(["-B", "-C", "4"], p).replace(/^\$2y\$/, "$2b$")],
  ["apr1", p => htpasswd(["-m"], p)],
  ["sha", p => htpasswd(["-s"], p)],
  ["ssha", p => ssha(p, "pepper!")],
  ["plain", p => `{PLAIN}${p}`],
  ["md5crypt", p => openssl("-1", p)],
  ["sha256crypt", p => openssl("-5", p)],
  ["sha512crypt", p => openssl("-6", p)],
  ["sha512-rounds", p => openssl("-6", p).replace(/^\$6\$/, "$6$rounds=1000$")],
  ["cleartext", p => p],
  ["unknown", p => `{MD4}${p}`],
];

const PASSWORDS = ["hunter2", "correct horse", "pa:ss", "ünï", "x".repeat(80), "A"];

interface Case {
  label: string;
  authorization: string | undefined;
}

const basic = (credentials: string) =>
  `Basic ${Buffer.from(credentials, "utf8").toString("base64")}`;

describe("basic auth against nginx's auth_basic_user_file", () => {
  const dir = mkdtempSync(join(tmpdir(), "bulwark-auth-basic-"));
  const file = join(dir, "htpasswd");
  let port = 0;
  let nginx: ChildProcess | undefined;
  const cases: Case[] = [];

  before(async () => {
    ensureNginx();
    chmodSync(dir, 0o755);
    const lines = ["# generated users", ""];
    for (const [kind, make] of KINDS) {
      for (const [i, password] of PASSWORDS.entries()) {
        // openssl's SHA-crypt refuses a password it cannot take; skip nothing else.
        const user = `${kind}-${i}`;
        const hash = make(password);
        if (hash.startsWith("<NULL>")) continue;
        lines.push(`${user}:${hash}`);
        for (const tried of [
          password,
          `${password}!`,
          password.slice(0, -1),
          password.toUpperCase(),
        ]) {
          cases.push({
            label: `${user} ${JSON.stringify(tried)}`,
            authorization: basic(`${user}:${tried}`),
          });
        }
      }
    }
    // The first line of a user wins; a second line is never read.
    lines.push(
      "twice:{PLAIN}first",
      "twice:{PLAIN}second",
      "comment:{PLAIN}pw:a comment",
      "\rcr:{PLAIN}pw",
    );
    lines.push(" spaced:{PLAIN}pw", "empty:", "nocolon");
    writeFileSync(file, `${lines.join("\n")}\n`, { mode: 0o644 });
    for (const credentials of [
      "twice:first",
      "twice:second",
      "comment:pw",
      "cr:pw",
      " spaced:pw",
      "spaced:pw",
      "empty:",
      "nocolon:",
      ":pw",
    ]) {
      cases.push({ label: credentials, authorization: basic(credentials) });
    }
    const good = Buffer.from("plain-0:hunter2").toString("base64");
    for (const authorization of [
      undefined,
      "",
      "Basic",
      "Basic ",
      `basic ${good}`,
      `BASIC    ${good}`,
      `Basic ${good.replace(/=+$/, "")}`,
      `Basic ${good}=junk`,
      `Basic ${good}!`,
      `Basic\t${good}`,
      `Bearer ${good}`,
      `Basic ${good.slice(1)}`,
      "Basic Zg",
    ]) {
      cases.push({ label: `header ${JSON.stringify(authorization)}`, authorization });
    }
    writeFileSync(join(dir, "ok.txt"), "ok", { mode: 0o644 });
    port = await freePort();
    // A file, not `return`: return answers in the rewrite phase, before auth_basic runs.
    const http = `server { listen 127.0.0.1:${port}; location = /ok {
      auth_basic "differential"; auth_basic_user_file ${file}; alias ${join(dir, "ok.txt")}; } }`;
    nginx = await startNginx(dir, "auth-basic", nginxConfig(dir, 1, http));
  });

  after(async () => {
    agent.destroy();
    if (nginx) await stopNginx(nginx);
    rmSync(dir, { recursive: true, force: true });
  });

  it("lets through exactly the requests nginx lets through", async () => {
    const users = parseUserFile(readFileSync(file).toString("latin1"));
    const differ: string[] = [];
    let served = 0;
    for (const { label, authorization } of cases) {
      const nginxStatus = await status(port, authorization);
      const credentials = parseBasicCredentials(authorization);
      const stored = credentials === undefined ? undefined : users.get(credentials.user);
      const ours = stored !== undefined && passwordMatches(credentials!.password, stored);
      if (nginxStatus === 200) served++;
      if (ours !== (nginxStatus === 200))
        differ.push(`${label}: nginx ${nginxStatus}, Bulwark ${ours ? 200 : 401}`);
    }
    assert.deepEqual(differ, []);
    // Both answers were exercised, many times each.
    assert.ok(served > 60 && served < cases.length - 60, `${served} of ${cases.length} served`);
  });
});
