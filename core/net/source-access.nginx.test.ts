// forwardedClient and sourceAllowed against Debian's nginx, whose realip and access modules
// ingress-nginx configures for use-forwarded-headers and the source-range annotations:
// - realip: servers trusting different proxy ranges (set_real_ip_from, real_ip_recursive on) echo
//   $remote_addr for thousands of generated X-Forwarded-For chains (trusted hops, untrusted
//   clients, ports, brackets, IPv6, non-addresses, several header lines); ours must name the same
//   client for every one;
// - access: locations with generated `deny …; allow …; deny all;` lists — written as ingress-nginx
//   writes them, from our parse of the annotation — answer 200 or 403 for generated clients.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { ChildProcess } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { Agent, request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureNginx, nginxConfig, startNginx, stopNginx } from "../../hack/nginx";
import { freePort } from "../../hack/control-plane/ports";
import { pick, seededRandom as seeded } from "../../test/harness/generate";
import { parseSourceRange, sourceAllowed } from "../annotations/source-range";
import { annotationKey } from "../annotations/validators";
import { forwardedClient } from "./forwarded";
import { formatIp, parseIp } from "./ip";
import { parseRanges, type IpRanges } from "./ranges";

type Random = () => number;
// The peer is always 127.0.0.1; every list but the last trusts it.
const TRUSTED_LISTS = [
  "127.0.0.1",
  "127.0.0.0/8,10.0.0.0/8",
  "127.0.0.1,10.1.0.0/16,2001:db8::/32",
  "0.0.0.0/0,::/0",
  "10.0.0.0/8",
];

const HOPS = [
  "10.1.2.3",
  "10.200.0.1",
  "203.0.113.7",
  "198.51.100.23",
  "2001:db8::10",
  "2001:db9::1",
  "::ffff:10.1.2.3",
  "::ffff:203.0.113.7",
  "127.0.0.1",
  "10.1.2.3:8080",
  "[2001:db8::10]:443",
  "[2001:db9::1]",
  "010.001.002.003",
  "203.0.113.7:0",
  "255.255.255.255",
  "unknown",
  "_hidden",
  "300.1.1.1",
  "fe80::1%eth0",
];

function chain(random: Random): string[] {
  const lines = random() < 0.15 ? 2 : 1;
  return Array.from({ length: lines }, () => {
    const count = 1 + Math.floor(random() * 5);
    const hops = Array.from({ length: count }, () => pick(random, HOPS));
    return hops.reduce((text, hop) => `${text}${pick(random, [", ", ",", " "])}${hop}`);
  });
}

const agent = new Agent({ keepAlive: true, maxSockets: 8 });

function get(
  port: number,
  path: string,
  headers: Record<string, string | string[]>,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path, headers, agent }, res => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", chunk => (body += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

/** Runs `task` over the items, `width` at a time. */
async function inBatches<T, R>(
  items: readonly T[],
  width: number,
  task: (item: T) => Promise<R>,
): Promise<R[]> {
  const results: R[] = [];
  for (let i = 0; i < items.length; i += width) {
    results.push(...(await Promise.all(items.slice(i, i + width).map(task))));
  }
  return results;
}

const ranges = (text: string): IpRanges => {
  const parsed = parseRanges(text);
  assert.ok(parsed.ok, text);
  return parsed.ranges;
};
const PEER = parseIp("127.0.0.1")!;
const spell = (text: string): string => formatIp(parseIp(text) ?? new Uint8Array()) || text;

// Networks and clients around a few bases, so that both answers are common.
const BASES = ["10.1.2.3", "192.0.2.77", "2001:db8:1::5", "::ffff:10.1.2.3"];
function network(random: Random): string {
  const base = pick(random, BASES);
  const bits = base.includes(":")
    ? pick(random, [16, 48, 64, 112, 120, 128])
    : pick(random, [8, 16, 24, 30, 32]);
  return random() < 0.2 ? base : `${base}/${bits}`;
}
function client(random: Random): string {
  const base = pick(random, BASES);
  const last = Math.floor(random() * 8);
  return base.includes(":")
    ? base.replace(/[0-9a-f]+$/, String(last))
    : base.replace(/\d+$/, String(last));
}

interface AccessCase {
  allow: string | undefined;
  deny: string | undefined;
}

function accessCase(random: Random): AccessCase {
  const list = () =>
    Array.from({ length: 1 + Math.floor(random() * 3) }, () => network(random)).join(",");
  const roll = random();
  return {
    allow: roll < 0.75 ? list() : undefined,
    deny: roll > 0.5 ? list() : undefined,
  };
}

/** A location serving a file: `return` would answer in the rewrite phase, before access runs. */
function accessLocation(index: number, c: AccessCase, file: string): string {
  const config = parse(c);
  const deny = (config.deny?.text ?? []).map(n => `deny ${n};`).join(" ");
  const allow =
    config.allow === undefined
      ? ""
      : `${config.allow.text.map(n => `allow ${n};`).join(" ")} deny all;`;
  return `location = /case/${index} { ${deny} ${allow} alias ${file}; }`;
}

function parse(c: AccessCase) {
  const annotations: Record<string, string> = {};
  if (c.allow !== undefined) annotations[annotationKey("allowlist-source-range")] = c.allow;
  if (c.deny !== undefined) annotations[annotationKey("denylist-source-range")] = c.deny;
  const parsed = parseSourceRange(annotations);
  assert.ok(parsed.ok && parsed.value !== undefined, JSON.stringify(c));
  return parsed.value;
}

const ACCESS_CASES = 300;

/**
 * The one difference, explained: nginx's access module checks an IPv4-mapped client
 * (::ffff:a.b.c.d, which only a proxy's header can give it: its IPv4 listeners see IPv4 peers)
 * against the IPv6 rules when the location has no IPv4 rule. Bulwark always reads such a client
 * as its IPv4 address, as nginx does whenever an IPv4 rule exists (an allowlist's `deny all` is one).
 */
function nginxMappedQuirk(client: string, config: ReturnType<typeof parse>): boolean {
  const v4Rules = (config.deny?.v4.length ?? 0) + (config.allow === undefined ? 0 : 1);
  return client.startsWith("::ffff:") && v4Rules === 0;
}

describe("client address and source ranges against nginx", () => {
  const dir = mkdtempSync(join(tmpdir(), "bulwark-realip-"));
  const ports: number[] = [];
  let accessPort = 0;
  let nginx: ChildProcess | undefined;
  const cases = Array.from({ length: ACCESS_CASES }, (_, i) => accessCase(seeded(1000 + i)));

  before(async () => {
    ensureNginx();
    // nginx's workers drop root: they must be able to read the file they serve.
    chmodSync(dir, 0o755);
    writeFileSync(join(dir, "ok.txt"), "ok", { mode: 0o644 });
    while (ports.length < TRUSTED_LISTS.length) ports.push(await freePort());
    accessPort = await freePort();
    const servers = TRUSTED_LISTS.map(
      (list, i) => `server {
        listen 127.0.0.1:${ports[i]};
        ${list
          .split(",")
          .map(n => `set_real_ip_from ${n};`)
          .join(" ")}
        real_ip_header X-Forwarded-For; real_ip_recursive on;
        location / { return 200 "$remote_addr"; }
      }`,
    );
    servers.push(`server {
      listen 127.0.0.1:${accessPort};
      set_real_ip_from 127.0.0.1; real_ip_header X-Real-IP;
      ${cases.map((c, i) => accessLocation(i, c, join(dir, "ok.txt"))).join("\n")}
    }`);
    nginx = await startNginx(dir, "realip", nginxConfig(dir, 1, servers.join("\n")));
  });

  after(async () => {
    agent.destroy();
    if (nginx) await stopNginx(nginx);
    rmSync(dir, { recursive: true, force: true });
  });

  for (const [i, list] of TRUSTED_LISTS.entries()) {
    it(`names the same client as nginx behind set_real_ip_from ${list}`, async () => {
      const random = seeded(40 + i);
      const chains = Array.from({ length: 1500 }, () => chain(random));
      const trusted = ranges(list);
      const answers = await inBatches(chains, 16, lines =>
        get(ports[i]!, "/", { "X-Forwarded-For": lines }),
      );
      const differences = chains
        .map((lines, n) => ({
          lines,
          nginx: spell(answers[n]!.body),
          ours: formatIp(forwardedClient(PEER, lines.join(", "), trusted)),
        }))
        .filter(row => row.nginx !== row.ours);
      assert.deepEqual(
        differences.slice(0, 8),
        [],
        `${differences.length} of ${chains.length} differ`,
      );
    });
  }

  it(`allows and denies as nginx for ${ACCESS_CASES} generated lists and 20 clients each`, async () => {
    const queries = cases.flatMap((c, index) => {
      const random = seeded(5000 + index);
      return Array.from({ length: 20 }, () => ({ index, client: client(random) }));
    });
    const answers = await inBatches(queries, 16, q =>
      get(accessPort, `/case/${q.index}`, { "X-Real-IP": q.client }),
    );
    const differences = queries
      .map((q, n) => ({
        ...q,
        case: cases[q.index],
        nginx: answers[n]!.status,
        ours: sourceAllowed(parse(cases[q.index]!), parseIp(q.client)!) ? 200 : 403,
      }))
      .filter(row => row.nginx !== row.ours && !nginxMappedQuirk(row.client, parse(row.case!)));
    assert.deepEqual(
      differences.slice(0, 8),
      [],
      `${differences.length} of ${queries.length} differ`,
    );
    const denied = answers.filter(a => a.status === 403).length;
    assert.ok(
      denied > queries.length / 5 && denied < (queries.length * 4) / 5,
      `${denied} denied: both answers are common`,
    );
  });
});
