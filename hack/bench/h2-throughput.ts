// HTTP/2 over TLS: the gateway against Debian's nginx, h2load driving both the same way.
//
//   npx tsx hack/bench/h2-throughput.ts [--duration 10] [--rounds 2] [--connections 10]
//                                       [--streams 10] [--workers 1] [--this-node] [--h1]
//
// One Node backend (a process of its own, HTTP/1.1, a small fixed answer) behind both. nginx
// (`listen ... ssl http2`, worker_processes = --workers, upstream keepalive, ingress-nginx's
// proxy headers) and the gateway (HTTPS listener, ALPN h2, a plain route, metrics and access log
// off as nginx's are) serve the same ECDSA certificate. h2load opens --connections connections
// with --streams streams in flight on each (10 × 10 = 100 streams), for --duration seconds, in
// --rounds interleaved rounds. Before measuring, both must answer the same status and body over
// h2. Per run: req/s, p50/p99 (h2load's per-request log), the proxy's CPU per request from /proc,
// and the backend's and h2load's CPU; then the medians and the gateway/nginx ratios. Nothing is
// asserted: numbers are printed. --h1: the same over HTTP/1.1 on the same TLS listeners (h2load
// then pipelines --streams requests per connection), to tell h2's cost from TLS's.
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { askOn, openSession } from "../../gateway/proxy/h2/testkit";
import { freePort } from "../control-plane/ports";
import { nginxConfig, startNginx, stopNginx } from "../nginx";
import { rerunOnImageNode } from "../node-runtime/runtime";
import { benchView, HOST, PROXY_HEADERS } from "./gateway-throughput-rows";
import { integerFlag, runBench } from "./cli";
import { cpuMs, waitedChildrenCpuMs, withChildren } from "./proc-cpu";
import {
  benchCertificate,
  interleavedRounds,
  nginxTlsServer,
  startListeningChild,
  startTlsGateway,
  stopChild,
  type Target,
} from "./tls-peers";
import { loadAverages, quantile } from "./stats";

const run = promisify(execFile);
const H2LOAD = "/usr/bin/h2load";
const PATH = "/hello";

interface Options {
  duration: number;
  rounds: number;
  connections: number;
  streams: number;
  workers: number;
  thisNode: boolean;
  /** HTTP/1.1 over the same TLS instead (h2load --h1): what h2 itself costs, apart from TLS. */
  h1: boolean;
}

function parseOptions(argv: string[]): Options {
  const value = (name: string, fallback: number) => integerFlag(argv, name, fallback);
  return {
    duration: value("--duration", 10),
    rounds: value("--rounds", 2),
    connections: value("--connections", 10),
    streams: value("--streams", 10),
    workers: value("--workers", 1),
    thisNode: argv.includes("--this-node"),
    h1: argv.includes("--h1"),
  };
}

export interface H2loadSummary {
  requests: number;
  succeeded: number;
  rps: number;
  status2xx: number;
  protocol: string;
  cipher: string;
}

/** The figures of h2load's summary (its latency table has no percentiles: see the log). */
export function parseH2load(stdout: string): H2loadSummary {
  const number = (pattern: RegExp) => Number(pattern.exec(stdout)?.[1] ?? NaN);
  return {
    requests: number(/requests: (\d+) total/),
    succeeded: number(/(\d+) succeeded/),
    rps: number(/finished in [\d.]+\w*, ([\d.]+) req\/s/),
    status2xx: number(/status codes: (\d+) 2xx/),
    protocol: /Application protocol: (\S+)/.exec(stdout)?.[1] ?? "none",
    cipher: /Cipher: (\S+)/.exec(stdout)?.[1] ?? "none",
  };
}

/** Per-request times (µs, third column) of h2load's --log-file, ascending. */
export function requestTimesUs(log: string): number[] {
  const times: number[] = [];
  for (const line of log.split("\n")) {
    const elapsed = Number(line.split("\t")[2]);
    if (line !== "" && Number.isFinite(elapsed)) times.push(elapsed);
  }
  return times.sort((a, b) => a - b);
}

interface RunResult extends H2loadSummary {
  p50ms: number;
  p99ms: number;
  cpuUsPerRequest: number;
  backendCorePercent: number;
  clientCorePercent: number;
}

interface Context {
  dir: string;
  backendPid: number;
  options: Options;
}

/** One h2load run against `target`; CPU of the proxy, the backend and h2load over it. */
async function h2load(target: Target, context: Context, duration: number): Promise<RunResult> {
  const { options, dir } = context;
  const log = join(dir, `h2load-${target.name}.log`);
  const args = [
    `-c${options.connections}`,
    `-m${options.streams}`,
    `-D${duration}`,
    `--connect-to=127.0.0.1:${target.port}`,
    `--log-file=${log}`,
    ...(options.h1 ? ["--h1"] : []),
    `https://${HOST}:${target.port}${PATH}`,
  ];
  const proxyBefore = cpuMs(target.pids());
  const backendBefore = cpuMs([context.backendPid]);
  // The shell prints its own stat after h2load ends: its waited-for children's CPU is h2load's.
  const script = `"$0" "$@"; status=$?; echo; cat /proc/$$/stat; exit $status`;
  const { stdout } = await run("sh", ["-c", script, H2LOAD, ...args], { maxBuffer: 1 << 20 });
  const proxyMs = cpuMs(target.pids()) - proxyBefore;
  const backendMs = cpuMs([context.backendPid]) - backendBefore;
  const clientMs = waitedChildrenCpuMs(stdout.trim().split("\n").at(-1)!);
  const summary = parseH2load(stdout);
  const times = requestTimesUs(readFileSync(log, "latin1"));
  const wallMs = duration * 1000;
  return {
    ...summary,
    p50ms: quantile(times, 0.5) / 1000,
    p99ms: quantile(times, 0.99) / 1000,
    cpuUsPerRequest: (proxyMs * 1000) / summary.requests,
    backendCorePercent: (100 * backendMs) / wallMs,
    clientCorePercent: (100 * clientMs) / wallMs,
  };
}

/** Status and body of one h2 request: the gateway and nginx must answer alike. */
async function answerOverH2(port: number): Promise<string> {
  const session = await openSession(port, HOST);
  try {
    const answer = await askOn(session, HOST, PATH);
    return JSON.stringify([answer.status, answer.body]);
  } finally {
    session.close();
  }
}

function printRun(name: string, r: RunResult, peer?: RunResult): void {
  const ratio =
    peer === undefined
      ? ""
      : `  req/s ratio ${(r.rps / peer.rps).toFixed(2)}  CPU/req ratio ${(r.cpuUsPerRequest / peer.cpuUsPerRequest).toFixed(2)}`;
  console.log(
    `  ${name.padEnd(8)} ${r.rps.toFixed(0).padStart(7)} req/s  p50 ${r.p50ms.toFixed(2)} ms  p99 ${r.p99ms.toFixed(2)} ms  CPU ${r.cpuUsPerRequest.toFixed(1).padStart(5)} µs/req  backend ${r.backendCorePercent.toFixed(0)} %  h2load ${r.clientCorePercent.toFixed(0)} % of a core  (${r.protocol}, ${r.cipher}, ${r.succeeded}/${r.requests} ok)${ratio}`,
  );
}

async function bench(options: Options): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "bulwark-bench-h2-"));
  const backend = await startListeningChild([join(__dirname, "h2-backends.ts"), "http"]);
  const certificate = await benchCertificate(dir);
  const nginxPort = await freePort();
  const upstream = `upstream web { server 127.0.0.1:${backend.port}; keepalive 320; keepalive_requests 1000000; }`;
  const server = nginxTlsServer(
    nginxPort,
    HOST,
    certificate,
    `${PROXY_HEADERS}\n      proxy_pass http://web;`,
  );
  const nginx = await startNginx(
    dir,
    "h2",
    nginxConfig(dir, options.workers, `${upstream}\n  ${server}`),
  );
  const gateway = await startTlsGateway(
    benchView(backend.port, "plain"),
    certificate,
    options.workers,
  );
  try {
    const targets: Target[] = [
      { name: "nginx", port: nginxPort, pids: () => withChildren(nginx.pid!) },
      { name: "gateway", port: gateway.plane.httpsPort!, pids: gateway.pids },
    ];
    const [fromNginx, fromGateway] = await Promise.all(targets.map(t => answerOverH2(t.port)));
    if (fromNginx !== fromGateway)
      throw new Error(`answers differ: nginx ${fromNginx}, gateway ${fromGateway}`);
    const context = { dir, backendPid: backend.child.pid!, options };
    console.log(
      `h2load -c${options.connections} -m${options.streams} -D${options.duration} (${options.connections * options.streams} streams in flight), TLS + ${options.h1 ? "HTTP/1.1 (--h1: pipelined)" : "h2"}, ${options.workers} worker(s), ${options.rounds} rounds; both answer ${fromNginx}; load average ${loadAverages()}`,
    );
    for (const target of targets) await h2load(target, context, 2); // warm-up (JIT, pools)
    await interleavedRounds(targets, options.rounds, t => h2load(t, context, options.duration), {
      rate: r => r.rps,
      cpuUs: r => r.cpuUsPerRequest,
      print: printRun,
    });
    console.log(`  load average after the runs: ${loadAverages()}`);
  } finally {
    await gateway.plane.close({ drainMs: 500 });
    await stopNginx(nginx);
    await stopChild(backend.child);
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  if (!options.thisNode && (await rerunOnImageNode())) return;
  console.log(`Node.js ${process.version}`);
  await bench(options);
}

if (require.main === module) runBench(main);
