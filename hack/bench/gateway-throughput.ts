// Gateway throughput and memory against Debian's nginx and @fastify/http-proxy, in one run.
//
//   npx tsx hack/bench/gateway-throughput.ts [--workers 1] [--duration 10] [--connections 64]
//                                            [--rounds 3] [--memory-only] [--skip-memory]
//
// One nginx process (1 worker) serves a tiny static answer as the backend. In front of it, in
// turn: nginx as a reverse proxy (worker_processes = --workers, upstream keepalive), the gateway
// (--workers processes) four ways, and @fastify/http-proxy (one process). The gateway runs:
// a plain route with metrics and access log off; the same with per-host metrics on; the route
// with traffic policy (3 canary ingresses, by header, cookie and query, none matching, so every
// rule is evaluated, plus CORS echoing the Origin) with metrics on; and that with the JSON access
// log on (written to /dev/null). wrk on loopback drives each with the same Host, path, Origin and
// connections. Then RSS of a gateway process after compiling 10k and 100k hosts. Numbers are
// printed; nothing is asserted.
import { execFile, execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import type { V1EndpointSlice, V1Ingress } from "@kubernetes/client-node";
import { startDataPlane } from "../../gateway/data-plane";
import type { ObserveOptions } from "../../gateway/observability/observer";
import { freePort } from "../control-plane/ports";
import { NGINX, nginxConfig, startNginx, stopNginx } from "../nginx";
import { imageNode } from "../node-runtime/runtime";

const run = promisify(execFile);
const HOST = "bench.test";
const ORIGIN = "https://app.bench.test";
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
  /** Another checkout whose data plane is measured too, in the same rounds (before/after a change). */
  baseline: string | undefined;
}

function parseOptions(argv: string[]): Options {
  const value = (name: string, fallback: number) => {
    const index = argv.indexOf(name);
    const parsed = index < 0 ? fallback : Number(argv[index + 1]);
    if (!Number.isInteger(parsed) || parsed <= 0)
      throw new Error(`${name}: expected a positive integer`);
    return parsed;
  };
  return {
    workers: value("--workers", 1),
    duration: value("--duration", 10),
    connections: value("--connections", 64),
    rounds: value("--rounds", 3),
    memoryOnly: argv.includes("--memory-only"),
    skipMemory: argv.includes("--skip-memory"),
    thisNode: argv.includes("--this-node"),
    baseline: argv.includes("--baseline") ? argv[argv.indexOf("--baseline") + 1] : undefined,
  };
}

interface WrkResult {
  rps: number;
  p50ms: number;
  p99ms: number;
  errors: number;
}

function toMs(text: string): number {
  const match = /^([\d.]+)(us|ms|s)$/.exec(text);
  if (match === null) return NaN;
  const n = Number(match[1]);
  return match[2] === "us" ? n / 1000 : match[2] === "s" ? n * 1000 : n;
}

async function wrk(port: number, options: Options): Promise<WrkResult> {
  const { stdout } = await run(WRK, [
    "-t1",
    `-c${options.connections}`,
    `-d${options.duration}s`,
    "--latency",
    "-H",
    `Host: ${HOST}`,
    "-H",
    `Origin: ${ORIGIN}`,
    `http://127.0.0.1:${port}/hello`,
  ]);
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(stdout)?.[1] ?? NaN);
  const p50ms = toMs(/\s50%\s+(\S+)/.exec(stdout)?.[1] ?? "");
  const p99ms = toMs(/\s99%\s+(\S+)/.exec(stdout)?.[1] ?? "");
  const errorMatch = /Non-2xx or 3xx responses:\s+(\d+)/.exec(stdout);
  const socketErrors = /Socket errors:.*/.exec(stdout)?.[0];
  if (socketErrors !== undefined) console.log(`    wrk: ${socketErrors}`);
  return { rps, p50ms, p99ms, errors: Number(errorMatch?.[1] ?? 0) };
}

const NGINX_PREFIX = "nginx.ingress.kubernetes.io/";

/** The traffic policy of the "policy" runs: CORS on the main ingress, three canaries. */
const POLICY: { main: Record<string, string>; canaries: Record<string, string>[] } = {
  main: { "enable-cors": "true", "cors-allow-origin": `${ORIGIN}, https://other.bench.test` },
  canaries: [
    { "canary-by-header": "X-Canary" },
    { "canary-by-cookie": "canary" },
    { "canary-by-query": "canary" },
  ],
};

function prefixed(annotations: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(annotations).map(([k, v]) => [NGINX_PREFIX + k, v]));
}

function benchIngress(name: string, annotations: Record<string, string>): V1Ingress {
  return {
    metadata: {
      namespace: "bench",
      name,
      creationTimestamp: new Date(0),
      annotations: prefixed(annotations),
    },
    spec: {
      rules: [
        {
          host: HOST,
          http: {
            paths: [
              {
                path: "/",
                pathType: "Prefix",
                backend: { service: { name: "web", port: { number: 80 } } },
              },
            ],
          },
        },
      ],
    },
  };
}

function benchView(backendPort: number, policy: boolean) {
  const ingresses = policy
    ? [
        benchIngress("bench", POLICY.main),
        ...POLICY.canaries.map((rule, i) =>
          benchIngress(`canary-${i}`, { canary: "true", ...rule }),
        ),
      ]
    : [benchIngress("bench", {})];
  const slice: V1EndpointSlice = {
    metadata: {
      namespace: "bench",
      name: "web-1",
      labels: { "kubernetes.io/service-name": "web" },
    },
    addressType: "IPv4",
    ports: [{ port: backendPort, protocol: "TCP" }],
    endpoints: [{ addresses: ["127.0.0.1"], conditions: { ready: true } }],
  };
  return { version: 1, ingresses, endpointSlices: [slice], tlsPairs: [] };
}

interface GatewayVariant {
  name: string;
  policy: boolean;
  observe: ObserveOptions;
}

const GATEWAY_VARIANTS: GatewayVariant[] = [
  { name: "plain route", policy: false, observe: { metrics: false, accessLog: false } },
  { name: "plain + metrics", policy: false, observe: { metrics: true, accessLog: false } },
  { name: "policy + metrics", policy: true, observe: { metrics: true, accessLog: false } },
  {
    name: "policy + metrics + log",
    policy: true,
    observe: { metrics: true, accessLog: true, accessLogPath: "/dev/null" },
  },
];

type StartDataPlane = typeof startDataPlane;

/** `--baseline DIR`: that checkout's startDataPlane, loaded beside this one's. */
function baselineStart(dir: string): StartDataPlane {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- a module chosen at run time
  const loaded = require(join(resolve(dir), "gateway/data-plane")) as {
    startDataPlane: StartDataPlane;
  };
  return loaded.startDataPlane;
}

async function benchGateway(
  backendPort: number,
  options: Options,
  variant: GatewayVariant,
  start: StartDataPlane = startDataPlane,
): Promise<WrkResult> {
  const port = await freePort();
  const plane = await start({
    httpPort: port,
    host: "127.0.0.1",
    workers: options.workers,
    defaultCertificates: [],
    observe: variant.observe,
  });
  try {
    const applied = await plane.apply(benchView(backendPort, variant.policy));
    if (applied.problems.length > 0) throw new Error(applied.problems.join("\n"));
    await wrk(port, { ...options, duration: 2 }); // warm-up (JIT, pools)
    return await wrk(port, options);
  } finally {
    await plane.close({ drainMs: 500 });
  }
}

/** Every gateway variant once, each followed by the baseline checkout's when there is one. */
async function gatewayRound(
  backendPort: number,
  options: Options,
  baseline: StartDataPlane | undefined,
  add: (name: string, result: WrkResult) => void,
): Promise<void> {
  for (const variant of GATEWAY_VARIANTS) {
    const name = `gateway ${variant.name} (${options.workers}w)`;
    add(name, await benchGateway(backendPort, options, variant));
    if (baseline === undefined) continue;
    add(`baseline: ${name}`, await benchGateway(backendPort, options, variant, baseline));
  }
}

/** The run with the median req/s (its latencies with it). */
function median(runs: WrkResult[]): WrkResult {
  const sorted = [...runs].sort((a, b) => a.rps - b.rps);
  return sorted[Math.floor(sorted.length / 2)]!;
}

async function benchFastify(backendPort: number, options: Options): Promise<WrkResult> {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [
      ...process.execArgv,
      join(__dirname, "gateway-throughput-fastify.ts"),
      String(port),
      String(backendPort),
    ],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  await new Promise<void>((resolve, reject) => {
    child.stdout?.once("data", () => resolve());
    child.once("exit", code => reject(new Error(`fastify proxy exited with ${code}`)));
  });
  try {
    await wrk(port, { ...options, duration: 2 });
    return await wrk(port, options);
  } finally {
    child.kill("SIGTERM");
  }
}

async function throughput(options: Options): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "bulwark-bench-gw-"));
  const backendPort = await freePort();
  const nginxPort = await freePort();
  const backend = await startNginx(
    dir,
    "backend",
    nginxConfig(
      dir,
      1,
      `server { listen 127.0.0.1:${backendPort}; keepalive_requests 1000000; location / { return 200 "hello from the backend\\n"; } }`,
    ),
  );
  const proxy = await startNginx(
    dir,
    "proxy",
    nginxConfig(
      dir,
      options.workers,
      `upstream web { server 127.0.0.1:${backendPort}; keepalive 320; keepalive_requests 1000000; }
  server {
    listen 127.0.0.1:${nginxPort};
    server_name ${HOST};
    keepalive_requests 1000000;
    location / {
      proxy_pass http://web;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $host;
      proxy_set_header X-Real-IP $remote_addr;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_set_header X-Forwarded-Proto $scheme;
      proxy_set_header X-Forwarded-Host $host;
      proxy_set_header X-Forwarded-Port $server_port;
    }
  }`,
    ),
  );
  try {
    console.log(
      `throughput: wrk -t1 -c${options.connections} -d${options.duration}s, ${options.workers} worker(s), loopback; load average ${loadavg()
        .map(l => l.toFixed(2))
        .join(" ")}`,
    );
    await wrk(nginxPort, { ...options, duration: 2 });
    // Interleaved rounds, so load from elsewhere on a shared machine hits every variant alike.
    const rounds = new Map<string, WrkResult[]>();
    const baseline = options.baseline === undefined ? undefined : baselineStart(options.baseline);
    const add = (name: string, result: WrkResult) =>
      rounds.set(name, [...(rounds.get(name) ?? []), result]);
    for (let round = 0; round < options.rounds; round++) {
      add("nginx (reverse proxy)", await wrk(nginxPort, options));
      await gatewayRound(backendPort, options, baseline, add);
    }
    const results: [string, WrkResult][] = [...rounds].map(([name, runs]) => [name, median(runs)]);
    results.push(["@fastify/http-proxy (1 process)", await benchFastify(backendPort, options)]);
    results.push(["backend direct (nginx static)", await wrk(backendPort, options)]);
    const base = results[0]![1].rps;
    const plain = results[1]![1].rps;
    for (const [name, r] of results) {
      console.log(
        `  ${name.padEnd(38)} ${r.rps.toFixed(0).padStart(8)} req/s  p50 ${r.p50ms.toFixed(2)} ms  p99 ${r.p99ms.toFixed(2)} ms  ratio/nginx ${(r.rps / base).toFixed(2)}  ratio/plain gateway ${(r.rps / plain).toFixed(2)}${r.errors > 0 ? `  non-2xx ${r.errors}` : ""}`,
      );
    }
    console.log(
      `  load average after the runs: ${loadavg()
        .map(l => l.toFixed(2))
        .join(" ")}`,
    );
  } finally {
    await stopNginx(proxy);
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

/**
 * The gateway's numbers are for the runtime the image ships (the Dockerfile's NODE_VERSION): run
 * there unless `--this-node` says otherwise. The fastify peer and the memory runs inherit it.
 */
async function onImageNode(): Promise<boolean> {
  const node = imageNode();
  const { stdout } = await run(node, ["--version"]);
  if (stdout.trim() === process.version) return false;
  console.log(
    `re-running on the image's Node.js ${stdout.trim()} (this one is ${process.version})`,
  );
  const child = spawn(node, [...process.execArgv, ...process.argv.slice(1)], { stdio: "inherit" });
  const code = await new Promise<number | null>(resolve => child.once("exit", resolve));
  process.exit(code ?? 1);
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  if (!options.thisNode && (await onImageNode())) return;
  console.log(`Node.js ${process.version}`);
  if (!options.memoryOnly) ensureTools();
  if (!options.memoryOnly) await throughput(options);
  if (!options.skipMemory) {
    console.log("memory: one gateway process, RSS after compiling and serving the view");
    await memory(10_000);
    await memory(100_000);
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
