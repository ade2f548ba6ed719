// The front door's corpus (test/harness/http-corpus.ts) through Debian's nginx and through Bulwark's
// data plane, side by side, each in front of the same kind of recording backend (Node's llhttp);
// prints every case where the two differ: the answers the client got and what the backend read.
// Bulwark stricter than nginx is fine; looser is a bug (the script exits 1 on any).
//
//   npx tsx hack/front-door-vs-nginx.ts [--all] [--markdown]
//
// nginx runs as the throughput benchmark's reverse proxy (hack/bench/gateway-throughput.ts: one
// worker, proxy_http_version 1.1, the same proxy_set_header lines) with ingress-nginx's header
// buffers, without upstream keepalive, so that bytes one case leaves on an upstream connection
// cannot spill into the next case.
import type { ChildProcess } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CasePlane } from "../test/harness/case-plane";
import { httpCorpus, type CorpusCase } from "../test/harness/http-corpus";
import {
  LlhttpRecorder,
  readResponses,
  RecordingBackend,
  sendRaw,
  type ParsedRequest,
} from "../test/harness/llhttp-recorder";
import { freePort } from "./control-plane/ports";
import { nginxConfig, startNginx, stopNginx } from "./nginx";

interface Seen {
  /** The client's answers: backend answers as "B200", the proxy's own as the status. */
  answers: string;
  /** What the backend read: method, target and body length per request. */
  forwarded: string;
  count: number;
}

function describeRequests(requests: ParsedRequest[]): string {
  return requests.map(r => `${r.method} ${r.target.slice(0, 40)} [${r.body.length}]`).join(" | ");
}

async function through(
  port: number,
  backend: RecordingBackend,
  c: CorpusCase,
  answers: number,
): Promise<Seen> {
  const before = backend.requests().length;
  const client = await sendRaw(port, c.bytes, answers);
  await new Promise(resolve => setTimeout(resolve, 20));
  const requests = backend.requests().slice(before);
  const responses = readResponses(client.bytes).responses;
  return {
    answers:
      responses.map(r => (r.fromBackend ? `B${r.status}` : String(r.status))).join(",") || "-",
    forwarded: describeRequests(requests) || "-",
    count: requests.length,
  };
}

/** nginx proxying to `backendPort`, with ingress-nginx's head limits. */
function startNginxProxy(dir: string, port: number, backendPort: number): Promise<ChildProcess> {
  const http = `# ingress-nginx's default (nginx's own is 4 8k): a field line up to 16 KiB, a head up to 64 KiB.
  large_client_header_buffers 4 16k;
  upstream web { server 127.0.0.1:${backendPort}; }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://web;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $host;
      proxy_set_header X-Real-IP $remote_addr;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_set_header X-Forwarded-Proto $scheme;
    }
  }`;
  return startNginx(dir, "nginx", nginxConfig(dir, 1, http));
}

type Verdict = "same" | "stricter" | "looser" | "other";

/** Bulwark against nginx: fewer requests forwarded, or a refusal where nginx served, is stricter. */
function verdict(nginx: Seen, bulwark: Seen): Verdict {
  if (nginx.answers === bulwark.answers && nginx.forwarded === bulwark.forwarded) return "same";
  if (bulwark.count < nginx.count) return "stricter";
  if (bulwark.count > nginx.count) return "looser";
  return "other";
}

async function main(): Promise<void> {
  const all = process.argv.includes("--all");
  const markdown = process.argv.includes("--markdown");
  const corpus = httpCorpus();
  const dir = mkdtempSync(join(tmpdir(), "bulwark-front-door-"));
  const recorder = await LlhttpRecorder.start();
  const nginxBackend = await RecordingBackend.start(recorder);
  const nginxPort = await freePort();
  const nginx = await startNginxProxy(dir, nginxPort, nginxBackend.port);
  const plane = await CasePlane.start(recorder);
  const counts: Record<Verdict, number> = { same: 0, stricter: 0, looser: 0, other: 0 };
  const rows: string[][] = [];
  try {
    for (const [index, c] of corpus.entries()) {
      if (process.stderr.isTTY) process.stderr.write(`\r${index + 1}/${corpus.length}`);
      const backend = await plane.nextBackend();
      const expected = (await recorder.parse(c.bytes)).requests.length;
      const fromNginx = await through(nginxPort, nginxBackend, c, expected);
      const fromBulwark = await through(plane.port, backend, c, expected);
      await backend.close();
      const v = verdict(fromNginx, fromBulwark);
      counts[v]++;
      if (v !== "same" || all) {
        rows.push([
          v,
          c.category,
          c.name.slice(0, 60),
          fromNginx.answers,
          fromBulwark.answers,
          fromNginx.forwarded,
          fromBulwark.forwarded,
        ]);
      }
    }
  } finally {
    if (process.stderr.isTTY) process.stderr.write("\n");
    await stopNginx(nginx);
    await plane.close();
    await nginxBackend.close();
    await recorder.close();
  }
  const header = [
    "verdict",
    "category",
    "case",
    "nginx answers",
    "bulwark answers",
    "nginx forwarded",
    "bulwark forwarded",
  ];
  if (markdown) {
    console.log(`| ${header.join(" | ")} |\n|${header.map(() => "---").join("|")}|`);
    for (const row of rows)
      console.log(`| ${row.map(cell => cell.replaceAll("|", "\\|")).join(" | ")} |`);
  } else {
    for (const row of [header, ...rows]) console.log(row.join("\t"));
  }
  console.log(
    `\n${corpus.length} cases: ${counts.same} the same, ${counts.stricter} stricter than nginx, ${counts.other} different answers with the same requests forwarded, ${counts.looser} looser`,
  );
  if (counts.looser > 0) process.exitCode = 1;
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
