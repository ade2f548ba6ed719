// Gateway throughput and memory against Debian's nginx and @fastify/http-proxy, in one run.
//
//   npx tsx hack/bench/gateway-throughput.ts [--workers 1] [--duration 10] [--connections 64]
//                                            [--rounds 3] [--memory-only] [--skip-memory]
//                                            [--rows N] [--listen-modes round-robin,reuse-port]
//                                            [--row I,J] (only those rows, by index)
//                                            [--cpu-profile DIR] (a V8 profile of each gateway run)
//                                            [--baseline DIR] (that checkout's gateway too; both
//                                            then in processes of their own)
//
// One nginx process (1 worker) serves a tiny static answer as the backend. Each row puts the
// gateway (--workers processes) and an nginx configured to do the same work (worker_processes =
// --workers, upstream keepalive, ingress-nginx's proxy headers) in front of it, in turn
// (gateway-throughput-rows.ts): a plain route; with per-host metrics; with traffic policy (3
// canary ingresses by header, cookie and query, none matching, so every rule is evaluated, plus
// CORS echoing the Origin; nginx: maps and add_header); with the JSON access log to a file
// (nginx: a log_format of the same fields, buffered); with access control (a source allowlist
// and a rate limit not reached; nginx: allow/deny and limit_req). For every run, req/s and the
// proxy's CPU time per request (from /proc over the run), the figure that moves least with the
// machine's load; with several workers, the primary's share of it (--listen-modes runs each
// gateway row once per way the workers share the ports: the primary's round robin, SO_REUSEPORT).
// Then @fastify/http-proxy and RSS of a gateway process after compiling 10k and
// 100k hosts. Numbers are printed; nothing is asserted.
import { execFile, execFileSync, spawn } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { get } from "node:http";
import { loadavg, tmpdir } from "node:os";
import { Session } from "node:inspector";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { startDataPlane } from "../../gateway/data-plane";
import { LISTEN_MODES, type ListenMode } from "../../gateway/listen-mode";
import { freePort } from "../control-plane/ports";
import { NGINX, nginxConfig, startNginx, stopNginx } from "../nginx";
import { rerunOnImageNode } from "../node-runtime/runtime";
import {
  AUTHORIZATION,
  HOST,
  HTPASSWD,
  ORIGIN,
  peerConfig,
  planePids,
  ROWS,
  serveRow,
  type Row,
} from "./gateway-throughput-rows";
import { integerFlag, runBench } from "./cli";
import type { HostConfig } from "./gateway-throughput-host";
import { cpuMs, withChildren } from "./proc-cpu";
import { medianBy, spread } from "./stats";

const run = promisify(execFile);
const WRK = "/usr/bin/wrk";

interface Options {
  workers: number;
  duration: number;
  connections: number;
  /** nginx and the gateway variants run this many times, interleaved; the median counts. */
  rounds: number;
  memoryOnly: boolean;
  skipMemory: boolean;
  /** Run on the Node.js that runs this script instead of the image's. */
  thisNode: boolean;
  /**
   * Another checkout whose data plane is measured too, in the same rounds (before/after a change);
   * then both gateways run in processes of their own (gateway-throughput-host.ts).
   */
  baseline: string | undefined;
  /** How several workers share the ports; with two modes, each gateway row runs in both. */
  listenModes: ListenMode[];
  /** The rows measured: the first N (--rows N), or those named (--row I,J); default all. */
  rows: readonly Row[];
  /** Where a CPU profile of each measured gateway run goes (this process only: 1 worker). */
  cpuProfileDir: string | undefined;
}

function rowsOf(argv: string[], first: number): readonly Row[] {
  const index = argv.indexOf("--row");
  if (index < 0) return ROWS.slice(0, first);
  const picked = (argv[index + 1] ?? "").split(",").map(Number);
  if (picked.some(i => !Number.isInteger(i) || ROWS[i] === undefined))
    throw new Error(`--row: expected indices from 0 to ${ROWS.length - 1}, comma-separated`);
  return picked.map(i => ROWS[i]!);
}

function parseOptions(argv: string[]): Options {
  const value = (name: string, fallback: number) => integerFlag(argv, name, fallback);
  return {
    workers: value("--workers", 1),
    duration: value("--duration", 10),
    connections: value("--connections", 64),
    rounds: value("--rounds", 3),
    memoryOnly: argv.includes("--memory-only"),
    skipMemory: argv.includes("--skip-memory"),
    thisNode: argv.includes("--this-node"),
    baseline: argv.includes("--baseline") ? argv[argv.indexOf("--baseline") + 1] : undefined,
    listenModes: listenModesOf(argv),
    rows: rowsOf(argv, value("--rows", ROWS.length)),
    cpuProfileDir: argv.includes("--cpu-profile")
      ? argv[argv.indexOf("--cpu-profile") + 1]
      : undefined,
  };
}

/** `--listen-modes round-robin,reuse-port`: the modes each gateway row runs in. */
function listenModesOf(argv: string[]): ListenMode[] {
  const index = argv.indexOf("--listen-modes");
  if (index < 0) return ["round-robin"];
  const modes = (argv[index + 1] ?? "").split(",");
  for (const mode of modes)
    if (!LISTEN_MODES.includes(mode as ListenMode))
      throw new Error(`--listen-modes: ${mode} is not one of ${LISTEN_MODES.join(", ")}`);
  return modes as ListenMode[];
}

interface WrkResult {
  rps: number;
  p50ms: number;
  p99ms: number;
  errors: number;
  requests: number;
  /** CPU of the proxy under test over the run, per request, in µs. */
  cpuUsPerRequest: number;
  /** With several gateway workers: the part of it the primary (this process) spent. */
  primaryUsPerRequest?: number;
}

function toMs(text: string): number {
  const match = /^([\d.]+)(us|ms|s)$/.exec(text);
  if (match === null) return NaN;
  const n = Number(match[1]);
  return match[2] === "us" ? n / 1000 : match[2] === "s" ? n * 1000 : n;
}

/** wrk against `port`; `pids` are the proxy's processes, whose CPU over the run is measured. */
async function wrk(port: number, options: Options, pids: () => number[]): Promise<WrkResult> {
  const before = cpuMs(pids());
  const { stdout } = await run(WRK, [
    "-t1",
    `-c${options.connections}`,
    `-d${options.duration}s`,
    "--latency",
    "-H",
    `Host: ${HOST}`,
    "-H",
    `Origin: ${ORIGIN}`,
    "-H",
    `Authorization: ${AUTHORIZATION}`,
    `http://127.0.0.1:${port}/hello`,
  ]);
  const spent = cpuMs(pids()) - before;
  const requests = Number(/(\d+) requests in/.exec(stdout)?.[1] ?? NaN);
  return { ...parseWrk(stdout), requests, cpuUsPerRequest: (spent * 1000) / requests };
}

function parseWrk(stdout: string): Omit<WrkResult, "requests" | "cpuUsPerRequest"> {
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(stdout)?.[1] ?? NaN);
  const p50ms = toMs(/\s50%\s+(\S+)/.exec(stdout)?.[1] ?? "");
  const p99ms = toMs(/\s99%\s+(\S+)/.exec(stdout)?.[1] ?? "");
  const errorMatch = /Non-2xx or 3xx responses:\s+(\d+)/.exec(stdout);
  const socketErrors = /Socket errors:.*/.exec(stdout)?.[0];
  if (socketErrors !== undefined) console.log(`    wrk: ${socketErrors}`);
  return { rps, p50ms, p99ms, errors: Number(errorMatch?.[1] ?? 0) };
}

/** This checkout, for a --baseline run's host processes. */
const ROOT = resolve(__dirname, "..", "..");

/** Where the gateway runs: the backend, its access log's file, and which checkout's data plane. */
interface GatewaySetup {
  backendPort: number;
  logPath: string;
  /** The checkout whose data plane serves, in a process of its own; undefined: this one, here. */
  checkout: string | undefined;
  /** The row's nginx, whose answer the gateway's must match (status and CORS headers). */
  peerPort: number;
  listenMode: ListenMode;
}

/** The status and CORS headers (Access-Control-*, Vary) of an answer to the bench's request. */
function answerShape(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const headers = { Origin: ORIGIN, Host: HOST, Authorization: AUTHORIZATION };
    get({ host: "127.0.0.1", port, path: "/hello", headers }, res => {
      res.resume();
      const cors = Object.entries(res.headers).filter(([name]) =>
        name.startsWith("access-control-"),
      );
      res.on("end", () => resolve(JSON.stringify([res.statusCode, cors.sort()])));
    }).on("error", reject);
  });
}

/** Fails the run when the gateway and its peer do not answer alike: the row would compare nothing. */
async function checkSameWork(row: Row, gatewayPort: number, peerPort: number): Promise<void> {
  const [gateway, peer] = await Promise.all([answerShape(gatewayPort), answerShape(peerPort)]);
  if (gateway !== peer) throw new Error(`${row.name}: gateway answers ${gateway}, nginx ${peer}`);
}

/** A gateway serving a row: its processes (the primary first) and how it stops. */
interface RunningGateway {
  port: number;
  pids(): number[];
  stop(): Promise<void>;
}

/** The row's gateway in this process (one worker serves here; with more, the primary). */
async function gatewayHere(
  setup: GatewaySetup,
  options: Options,
  row: Row,
): Promise<RunningGateway> {
  const port = await freePort();
  const plane = await serveRow(startDataPlane, { ...setup, row, port, workers: options.workers });
  return {
    port,
    pids: () => planePids(plane),
    stop: () => plane.close({ drainMs: 500 }),
  };
}

/** The row's gateway from `checkout`, in a process of its own (gateway-throughput-host.ts). */
async function gatewayHosted(
  checkout: string,
  setup: GatewaySetup,
  options: Options,
  row: Row,
): Promise<RunningGateway> {
  const config: HostConfig = {
    checkout,
    row: ROWS.indexOf(row),
    port: await freePort(),
    backendPort: setup.backendPort,
    logPath: setup.logPath,
    workers: options.workers,
    listenMode: setup.listenMode,
  };
  const child = spawn(
    process.execPath,
    [...process.execArgv, join(__dirname, "gateway-throughput-host.ts"), JSON.stringify(config)],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  const exited = new Promise<void>(resolve => child.once("exit", () => resolve()));
  const pids = await new Promise<number[]>((resolve, reject) => {
    child.stdout!.once("data", (data: Buffer) => resolve(JSON.parse(data.toString()).pids));
    child.once("exit", code => reject(new Error(`the gateway host exited with ${code}`)));
  });
  return {
    port: config.port,
    pids: () => pids,
    stop: async () => {
      child.kill("SIGTERM");
      await exited;
    },
  };
}

async function benchGateway(setup: GatewaySetup, options: Options, row: Row): Promise<WrkResult> {
  const hosted = setup.checkout !== undefined;
  const gateway = hosted
    ? await gatewayHosted(setup.checkout!, setup, options, row)
    : await gatewayHere(setup, options, row);
  const { port, pids } = gateway;
  try {
    await checkSameWork(row, port, setup.peerPort);
    await wrk(port, { ...options, duration: 2 }, pids); // warm-up (JIT, pools)
    const primary = [pids()[0]!];
    const primaryBefore = cpuMs(primary);
    // A CPU profile is taken of this process only.
    const profileDir = hosted ? undefined : options.cpuProfileDir;
    const result = await profiled(profileDir, row, () => wrk(port, options, pids));
    if (options.workers === 1) return result;
    const primaryMs = cpuMs(primary) - primaryBefore;
    return { ...result, primaryUsPerRequest: (primaryMs * 1000) / result.requests };
  } finally {
    await gateway.stop();
  }
}

/** Runs `work` under V8's CPU profiler (this process) when `dir` is set; the profile goes there. */
async function profiled<T>(dir: string | undefined, row: Row, work: () => Promise<T>): Promise<T> {
  if (dir === undefined) return work();
  const session = new Session();
  session.connect();
  const post = promisify(session.post.bind(session)) as (method: string) => Promise<unknown>;
  await post("Profiler.enable");
  await post("Profiler.start");
  try {
    return await work();
  } finally {
    const { profile } = (await post("Profiler.stop")) as { profile: object };
    mkdirSync(dir, { recursive: true });
    const name = `${row.name.replace(/\W+/g, "-")}-${Date.now()}.cpuprofile`;
    writeFileSync(join(dir, name), JSON.stringify(profile));
    session.disconnect();
  }
}

/** nginx doing the row's work, on a port of its own. */
interface Peer {
  port: number;
  pids: () => number[];
  stop(): Promise<void>;
}

async function startPeer(dir: string, row: Row, backendPort: number, options: Options) {
  const port = await freePort();
  const name = `peer-${ROWS.indexOf(row)}`;
  const htpasswd = join(dir, "htpasswd");
  writeFileSync(htpasswd, HTPASSWD, { mode: 0o644 });
  // nginx's workers (user nobody) read the file on every request: the folder must let them in.
  chmodSync(dir, 0o755);
  const files = { log: join(dir, `${name}-access.log`), htpasswd };
  const config = peerConfig(row, port, backendPort, files);
  const child = await startNginx(dir, name, nginxConfig(dir, options.workers, config));
  const peer: Peer = { port, pids: () => withChildren(child.pid!), stop: () => stopNginx(child) };
  return peer;
}

/** The run with the median req/s (its latencies and CPU with it). */
function median(runs: WrkResult[]): WrkResult {
  const sorted = [...runs].sort((a, b) => a.rps - b.rps);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** A Node process of its own in front of the backend (a peer script's file name), warmed, measured. */
async function benchNodePeer(
  script: string,
  backendPort: number,
  options: Options,
): Promise<WrkResult> {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [...process.execArgv, join(__dirname, script), String(port), String(backendPort)],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  await new Promise<void>((resolve, reject) => {
    child.stdout?.once("data", () => resolve());
    child.once("exit", code => reject(new Error(`${script} exited with ${code}`)));
  });
  const pids = () => [child.pid!];
  try {
    await wrk(port, { ...options, duration: 2 }, pids);
    return await wrk(port, options, pids);
  } finally {
    child.kill("SIGTERM");
  }
}

/**
 * Every row once: its nginx peer, its gateway, and the baseline checkout's gateway if any (then
 * both in processes of their own, so neither runs where the other's code was loaded).
 */
async function round(
  context: { dir: string; backendPort: number; peers: Peer[]; baseline?: string },
  options: Options,
  add: (name: string, result: WrkResult) => void,
): Promise<void> {
  for (const [i, row] of options.rows.entries()) {
    const peer = context.peers[i]!;
    add(`nginx: ${row.name}`, await wrk(peer.port, options, peer.pids));
    const setup = {
      backendPort: context.backendPort,
      logPath: join(context.dir, `gateway-${i}-access.log`),
      checkout: context.baseline === undefined ? undefined : ROOT,
      peerPort: peer.port,
      listenMode: options.listenModes[0]!,
    };
    for (const listenMode of options.listenModes) {
      const result = await benchGateway({ ...setup, listenMode }, options, row);
      add(gatewayName(row, listenMode, options), result);
    }
    const baseline = context.baseline;
    if (baseline === undefined) continue;
    const checkout = resolve(baseline);
    add(`baseline: ${row.name}`, await benchGateway({ ...setup, checkout }, options, row));
  }
}

/** A gateway row's name; with several listen modes, the mode in brackets. */
function gatewayName(row: Row, mode: ListenMode, options: Options): string {
  return options.listenModes.length > 1 ? `gateway: ${row.name} [${mode}]` : `gateway: ${row.name}`;
}

/** With several workers: how the gateway's CPU per request splits between primary and workers. */
function cpuSplit(r: WrkResult): string {
  if (r.primaryUsPerRequest === undefined) return "";
  const workers = r.cpuUsPerRequest - r.primaryUsPerRequest;
  return `  (primary ${r.primaryUsPerRequest.toFixed(1)}, workers ${workers.toFixed(1)} µs/req)`;
}

/** Under a row's median: the spread of its rounds (req/s, CPU per request). */
function printSpread(runs: WrkResult[]): void {
  if (runs.length < 2) return;
  const rps = spread(runs, r => r.rps);
  console.log(
    `    ${runs.length} rounds: ${rps} req/s, ${spread(runs, r => r.cpuUsPerRequest, 1)} µs/req`,
  );
}

/**
 * Under a gateway row: its rounds paired with the same round's nginx (and baseline), which ran
 * seconds apart. The machine's slow spells last longer than that, so a figure per pair cancels
 * most of them, where the medians above each pick their own round.
 */
function printPaired(
  runs: WrkResult[],
  peer: WrkResult[],
  baseline: WrkResult[] | undefined,
): void {
  if (runs.length < 2) return;
  const each = (f: (r: WrkResult, i: number) => number, digits: number): string => {
    const values = runs.map(f);
    return `${medianBy(values, v => v).toFixed(digits)} (${spread(values, v => v, digits)})`;
  };
  const cpu = each((r, i) => r.cpuUsPerRequest / peer[i]!.cpuUsPerRequest, 2);
  console.log(
    `    paired by round: CPU/req ratio ${cpu}, req/s ratio ${each((r, i) => r.rps / peer[i]!.rps, 2)}`,
  );
  if (baseline === undefined) return;
  const cheaper = runs.filter((r, i) => r.cpuUsPerRequest < baseline[i]!.cpuUsPerRequest).length;
  const delta = each((r, i) => r.cpuUsPerRequest - baseline[i]!.cpuUsPerRequest, 1);
  console.log(
    `    against the baseline, paired by round: ${delta} µs/req, cheaper in ${cheaper} of ${runs.length} rounds`,
  );
}

function printRow(name: string, r: WrkResult, peer: WrkResult | undefined): void {
  const vs =
    peer === undefined
      ? ""
      : `  req/s ratio ${(r.rps / peer.rps).toFixed(2)}  CPU/req ratio ${(r.cpuUsPerRequest / peer.cpuUsPerRequest).toFixed(2)}`;
  console.log(
    `  ${name.padEnd(40)} ${r.rps.toFixed(0).padStart(8)} req/s  p50 ${r.p50ms.toFixed(2)} ms  p99 ${r.p99ms.toFixed(2)} ms  CPU ${r.cpuUsPerRequest.toFixed(1).padStart(5)} µs/req${cpuSplit(r)}${vs}${r.errors > 0 ? `  non-2xx ${r.errors}` : ""}`,
  );
}

async function throughput(options: Options): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "bulwark-bench-gw-"));
  const backendPort = await freePort();
  const backend = await startNginx(
    dir,
    "backend",
    nginxConfig(
      dir,
      1,
      `server { listen 127.0.0.1:${backendPort}; keepalive_requests 1000000; location / { return 200 "hello from the backend\\n"; } }`,
    ),
  );
  const peers: Peer[] = [];
  try {
    for (const row of options.rows) peers.push(await startPeer(dir, row, backendPort, options));
    console.log(
      `throughput: wrk -t1 -c${options.connections} -d${options.duration}s, ${options.workers} worker(s), loopback; load average ${loadavg()
        .map(l => l.toFixed(2))
        .join(" ")}`,
    );
    for (const peer of peers) await wrk(peer.port, { ...options, duration: 2 }, peer.pids);
    // Interleaved rounds, so load from elsewhere on a shared machine hits every row alike.
    const rounds = new Map<string, WrkResult[]>();
    const baseline = options.baseline;
    const add = (name: string, result: WrkResult) =>
      rounds.set(name, [...(rounds.get(name) ?? []), result]);
    for (let i = 0; i < options.rounds; i++) {
      await round({ dir, backendPort, peers, baseline }, options, add);
    }
    const result = (name: string) => median(rounds.get(name)!);
    console.log("  each gateway row against nginx doing the same work (ratios: gateway / nginx)");
    for (const row of options.rows) {
      const peer = result(`nginx: ${row.name}`);
      printRow(`nginx: ${row.name}`, peer, undefined);
      printSpread(rounds.get(`nginx: ${row.name}`)!);
      for (const mode of options.listenModes) {
        const name = gatewayName(row, mode, options);
        printRow(name, result(name), peer);
        printSpread(rounds.get(name)!);
        const base = baseline === undefined ? undefined : rounds.get(`baseline: ${row.name}`);
        printPaired(rounds.get(name)!, rounds.get(`nginx: ${row.name}`)!, base);
      }
      if (baseline !== undefined) {
        printRow(`baseline: ${row.name}`, result(`baseline: ${row.name}`), peer);
        printSpread(rounds.get(`baseline: ${row.name}`)!);
        printPaired(
          rounds.get(`baseline: ${row.name}`)!,
          rounds.get(`nginx: ${row.name}`)!,
          undefined,
        );
      }
      if (row.note !== undefined) console.log(`    (${row.note})`);
    }
    const plainPeer = result(`nginx: ${options.rows[0]!.name}`);
    const fastify = await benchNodePeer("gateway-throughput-fastify.ts", backendPort, options);
    printRow("@fastify/http-proxy (1 process)", fastify, plainPeer);
    const relay = await benchNodePeer("gateway-throughput-relay.ts", backendPort, options);
    printRow("Node relay floor (pipe, no HTTP)", relay, plainPeer);
    const pids = () => withChildren(backend.pid!);
    printRow("backend direct (nginx static)", await wrk(backendPort, options, pids), plainPeer);
    console.log(
      `  load average after the runs: ${loadavg()
        .map(l => l.toFixed(2))
        .join(" ")}`,
    );
  } finally {
    for (const peer of peers) await peer.stop();
    await stopNginx(backend);
    rmSync(dir, { recursive: true, force: true });
  }
}

async function memory(hosts: number): Promise<void> {
  const { stdout } = await run(
    process.execPath,
    [...process.execArgv, join(__dirname, "gateway-throughput-memory.ts"), String(hosts)],
    { maxBuffer: 1024 * 1024 },
  );
  process.stdout.write(stdout);
}

/** nginx and wrk come from Debian, through hack/system-packages.sh when missing. */
function ensureTools(): void {
  if (existsSync(NGINX) && existsSync(WRK)) return;
  execFileSync("bash", [join(__dirname, "..", "system-packages.sh")], { stdio: "inherit" });
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  // The gateway's numbers are for the image's runtime; the fastify peer and memory runs inherit it.
  if (!options.thisNode && (await rerunOnImageNode())) return;
  console.log(`Node.js ${process.version}`);
  if (!options.memoryOnly) ensureTools();
  if (!options.memoryOnly) await throughput(options);
  if (!options.skipMemory) {
    console.log("memory: one gateway process, RSS after compiling and serving the view");
    await memory(10_000);
    await memory(100_000);
  }
}

runBench(main);
