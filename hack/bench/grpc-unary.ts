// gRPC unary calls through the gateway against Debian's nginx `grpc_pass`, grpc-js on both ends.
//
//   npx tsx hack/bench/grpc-unary.ts [--duration 10] [--rounds 2] [--channels 10]
//                                    [--in-flight 100] [--clients 2] [--workers 1] [--this-node]
//
// ghz is not packaged for Debian, so the load is grpc-js (grpc-unary-client.ts), in --clients
// processes that share --channels channels (each its own TLS connection) and --in-flight calls
// kept going, for --duration seconds after a warm-up. Behind both proxies: one grpc-js server
// (h2c, an echo of raw bytes) in a process of its own. nginx: `listen ... ssl http2`,
// `grpc_pass grpc://` to an upstream with keepalive; the gateway: an Ingress with
// backend-protocol GRPC on its HTTPS listener; both serve the same ECDSA certificate. Before
// measuring, one call through each must come back OK with the same reply. Per run: calls/s,
// p50/p99, the proxy's CPU per call from /proc, the backend's and the clients' CPU; then the
// medians of --rounds interleaved rounds and the gateway/nginx ratios. Nothing is asserted.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as grpc from "@grpc/grpc-js";
import { freePort } from "../control-plane/ports";
import { nginxConfig, startNginx, stopNginx } from "../nginx";
import { rerunOnImageNode } from "../node-runtime/runtime";
import { benchView, HOST } from "./gateway-throughput-rows";
import type { ClientResult } from "./grpc-unary-client";
import { EchoClient } from "./grpc-unary-service";
import { integerFlag, runBench } from "./cli";
import { cpuMs, withChildren } from "./proc-cpu";
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

/** Time for the client processes to start, connect and warm up before the counted window. */
const WARM_UP_MS = 3000;

interface Options {
  duration: number;
  rounds: number;
  channels: number;
  inFlight: number;
  clients: number;
  workers: number;
  thisNode: boolean;
}

function parseOptions(argv: string[]): Options {
  const value = (name: string, fallback: number) => integerFlag(argv, name, fallback);
  const options = {
    duration: value("--duration", 10),
    rounds: value("--rounds", 2),
    channels: value("--channels", 10),
    inFlight: value("--in-flight", 100),
    clients: value("--clients", 2),
    workers: value("--workers", 1),
    thisNode: argv.includes("--this-node"),
  };
  if (options.channels % options.clients !== 0 || options.inFlight % options.clients !== 0)
    throw new Error("--channels and --in-flight must divide among --clients");
  return options;
}

interface RunResult {
  callsPerSecond: number;
  calls: number;
  failures: number;
  firstFailure: string | undefined;
  p50ms: number;
  p99ms: number;
  cpuUsPerCall: number;
  backendCorePercent: number;
  clientCorePercent: number;
}

function clientProcess(target: Target, options: Options, startAt: number) {
  const args = [
    join(__dirname, "grpc-unary-client.ts"),
    String(target.port),
    HOST,
    String(options.channels / options.clients),
    String(options.inFlight / options.clients),
    String(startAt),
    String(options.duration),
  ];
  const child = spawn(process.execPath, [...process.execArgv, ...args], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const result = new Promise<ClientResult>((resolve, reject) => {
    let text = "";
    child.stdout.on("data", (chunk: Buffer) => (text += chunk.toString()));
    child.once("exit", code => {
      const line = /^result (.*)$/m.exec(text);
      if (line === null) reject(new Error(`grpc client exited with ${code}, no result`));
      else resolve(JSON.parse(line[1]!) as ClientResult);
    });
  });
  return { child, result };
}

const at = (time: number) => new Promise(resolve => setTimeout(resolve, time - Date.now()));

/** One run against `target`: the clients' load, and CPU over the counted window. */
async function load(target: Target, options: Options, backendPid: number): Promise<RunResult> {
  const startAt = Date.now() + WARM_UP_MS;
  const clients = Array.from({ length: options.clients }, () =>
    clientProcess(target, options, startAt),
  );
  const clientPids = () => clients.map(c => c.child.pid!);
  const pids = (): number[][] => [target.pids(), [backendPid], clientPids()];
  await at(startAt);
  const before = pids().map(cpuMs);
  await at(startAt + options.duration * 1000);
  const [proxyMs, backendMs, clientMs] = pids().map((group, i) => cpuMs(group) - before[i]!);
  const results = await Promise.all(clients.map(c => c.result));
  const latencies = results.flatMap(r => r.latenciesUs).sort((a, b) => a - b);
  const calls = latencies.length;
  const wallMs = options.duration * 1000;
  return {
    callsPerSecond: calls / options.duration,
    calls,
    failures: results.reduce((sum, r) => sum + r.failures, 0),
    firstFailure: results.find(r => r.firstFailure !== undefined)?.firstFailure,
    p50ms: quantile(latencies, 0.5) / 1000,
    p99ms: quantile(latencies, 0.99) / 1000,
    cpuUsPerCall: (proxyMs! * 1000) / calls,
    backendCorePercent: (100 * backendMs!) / wallMs,
    clientCorePercent: (100 * clientMs!) / wallMs,
  };
}

/** One call through the proxy: its status code and reply. */
function oneCall(port: number): Promise<string> {
  const credentials = grpc.credentials.createSsl(null, null, null, { rejectUnauthorized: false });
  const client = new EchoClient(`127.0.0.1:${port}`, credentials, {
    "grpc.default_authority": HOST,
    "grpc.ssl_target_name_override": HOST,
  }) as unknown as grpc.Client & {
    Echo(request: Buffer, callback: (e: grpc.ServiceError | null, r?: Buffer) => void): void;
  };
  return new Promise(resolve =>
    client.Echo(Buffer.from("same?"), (error, reply) => {
      client.close();
      resolve(JSON.stringify([error?.code ?? grpc.status.OK, reply?.toString() ?? ""]));
    }),
  );
}

function printRun(name: string, r: RunResult, peer?: RunResult): void {
  const ratio =
    peer === undefined
      ? ""
      : `  calls/s ratio ${(r.callsPerSecond / peer.callsPerSecond).toFixed(2)}  CPU/call ratio ${(r.cpuUsPerCall / peer.cpuUsPerCall).toFixed(2)}`;
  const failed = r.failures > 0 ? `  FAILED ${r.failures} (${r.firstFailure})` : "";
  console.log(
    `  ${name.padEnd(10)} ${r.callsPerSecond.toFixed(0).padStart(6)} calls/s  p50 ${r.p50ms.toFixed(2)} ms  p99 ${r.p99ms.toFixed(2)} ms  CPU ${r.cpuUsPerCall.toFixed(1).padStart(5)} µs/call  backend ${r.backendCorePercent.toFixed(0)} %  clients ${r.clientCorePercent.toFixed(0)} % of a core${failed}${ratio}`,
  );
}

function grpcView(backendPort: number) {
  const view = benchView(backendPort, "plain");
  const [ingress] = view.ingresses;
  ingress!.metadata!.annotations = { "nginx.ingress.kubernetes.io/backend-protocol": "GRPC" };
  return view;
}

async function startNginxPeer(dir: string, backendPort: number, options: Options) {
  const certificate = await benchCertificate(dir);
  const port = await freePort();
  const upstream = `upstream grpc_backend { server 127.0.0.1:${backendPort}; keepalive 320; keepalive_requests 1000000; }`;
  const location = `grpc_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      grpc_set_header X-Request-ID $request_id;
      grpc_pass grpc://grpc_backend;`;
  const server = nginxTlsServer(port, HOST, certificate, location);
  const child = await startNginx(
    dir,
    "grpc",
    nginxConfig(dir, options.workers, `${upstream}\n  ${server}`),
  );
  return { certificate, port, child };
}

async function bench(options: Options): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "bulwark-bench-grpc-"));
  const backend = await startListeningChild([join(__dirname, "h2-backends.ts"), "grpc"]);
  let nginx: ChildProcess | undefined;
  let gateway: Awaited<ReturnType<typeof startTlsGateway>> | undefined;
  try {
    const peer = await startNginxPeer(dir, backend.port, options);
    nginx = peer.child;
    gateway = await startTlsGateway(grpcView(backend.port), peer.certificate, options.workers);
    const targets: Target[] = [
      { name: "nginx", port: peer.port, pids: () => withChildren(peer.child.pid!) },
      { name: "gateway", port: gateway.plane.httpsPort!, pids: gateway.pids },
    ];
    const [fromNginx, fromGateway] = await Promise.all(targets.map(t => oneCall(t.port)));
    if (fromNginx !== fromGateway)
      throw new Error(`answers differ: nginx ${fromNginx}, gateway ${fromGateway}`);
    console.log(
      `grpc-js unary: ${options.clients} client processes, ${options.channels} channels, ${options.inFlight} calls in flight, ${options.duration} s after ${WARM_UP_MS / 1000} s warm-up, TLS + h2, ${options.workers} worker(s); both answer ${fromNginx}; load average ${loadAverages()}`,
    );
    const backendPid = backend.child.pid!;
    await interleavedRounds(targets, options.rounds, t => load(t, options, backendPid), {
      rate: r => r.callsPerSecond,
      cpuUs: r => r.cpuUsPerCall,
      print: printRun,
    });
    console.log(`  load average after the runs: ${loadAverages()}`);
  } finally {
    await gateway?.plane.close({ drainMs: 500 });
    if (nginx !== undefined) await stopNginx(nginx);
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

runBench(main);
