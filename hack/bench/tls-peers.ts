// What the HTTP/2 benchmarks (h2-throughput.ts, grpc-unary.ts) share: one ECDSA certificate for
// both the gateway and nginx, nginx's TLS server block, the gateway started with that certificate,
// a backend process of their own, latency percentiles and the run's summary line.
import { spawn, type ChildProcess } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { startDataPlane, type DataPlane, type GatewayView } from "../../gateway/data-plane";
import { medianBy, spread } from "./stats";
import { makeDefaultCertificates, type PemPair } from "../../gateway/tls/default-certificate";

export interface BenchCertificate {
  pair: PemPair;
  certFile: string;
  keyFile: string;
}

/** The gateway's own kind of certificate (ECDSA P-256), written to `dir` for nginx too. */
export async function benchCertificate(dir: string): Promise<BenchCertificate> {
  const [ecdsa] = await makeDefaultCertificates();
  const certFile = join(dir, "bench.crt");
  const keyFile = join(dir, "bench.key");
  writeFileSync(certFile, ecdsa!.cert);
  writeFileSync(keyFile, ecdsa!.key, { mode: 0o600 });
  return { pair: ecdsa!, certFile, keyFile };
}

/**
 * nginx's HTTPS server with HTTP/2 (nginx 1.22: `listen ... ssl http2`; 1.25.1 and later spell it
 * `http2 on`), no request cap per connection (the gateway has none), `location` inside.
 */
export function nginxTlsServer(
  port: number,
  host: string,
  certificate: BenchCertificate,
  location: string,
): string {
  return `server {
    listen 127.0.0.1:${port} ssl http2;
    server_name ${host};
    ssl_certificate ${certificate.certFile};
    ssl_certificate_key ${certificate.keyFile};
    ssl_protocols TLSv1.2 TLSv1.3;
    keepalive_requests 1000000;
    location / {
      ${location}
    }
  }`;
}

export interface BenchGateway {
  plane: DataPlane;
  /** The processes that serve: this one with one worker, the primary and workers with more. */
  pids(): number[];
}

/** The gateway's data plane with an HTTPS listener serving `certificate` and `view`. */
export async function startTlsGateway(
  view: GatewayView,
  certificate: BenchCertificate,
  workers: number,
): Promise<BenchGateway> {
  const plane = await startDataPlane({
    httpPort: 0,
    httpsPort: 0,
    host: "127.0.0.1",
    workers,
    defaultCertificates: [certificate.pair],
    // As nginx runs here: no access log, no per-host metrics.
    observe: { metrics: false, accessLog: false },
  });
  const applied = await plane.apply(view);
  if (applied.problems.length > 0) throw new Error(applied.problems.join("\n"));
  const pids = () => [...new Set([process.pid, ...plane.status().workers.map(w => w.pid)])];
  return { plane, pids };
}

/**
 * A process of its own running `args` (node and its loader are this process's), ready once it
 * prints "listening <port>"; resolves with the child and that port.
 */
export function startListeningChild(
  args: string[],
): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, [...process.execArgv, ...args], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  return new Promise((resolve, reject) => {
    let text = "";
    const onData = (chunk: Buffer) => {
      text += chunk.toString();
      const match = /listening (\d+)/.exec(text);
      if (match === null) return;
      child.stdout?.off("data", onData);
      child.stdout?.resume();
      child.off("exit", onExit);
      resolve({ child, port: Number(match[1]) });
    };
    const onExit = (code: number | null) => reject(new Error(`${args[0]} exited with ${code}`));
    child.stdout?.on("data", onData);
    child.once("exit", onExit);
  });
}

/** Stops a child started above and waits until it has gone. */
export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise(resolve => child.once("exit", resolve));
  child.kill("SIGTERM");
  await exited;
}

/** A proxy under test: where it listens and which processes serve (for their CPU). */
export interface Target {
  name: string;
  port: number;
  pids(): number[];
}

export interface RoundsReport<R> {
  /** What the medians are taken by (req/s, calls/s). */
  rate(result: R): number;
  /** CPU per request or call, in µs. */
  cpuUs(result: R): number;
  /** One result's line; `peer` is nginx's median, for the ratios. */
  print(name: string, result: R, peer?: R): void;
}

/**
 * `rounds` rounds of one run per target, interleaved so load from elsewhere on a shared machine
 * hits every target alike; prints each run, then each target's median with the spread of its
 * rate and CPU, ratios against the target named "nginx".
 */
export async function interleavedRounds<R>(
  targets: readonly Target[],
  rounds: number,
  measure: (target: Target) => Promise<R>,
  report: RoundsReport<R>,
): Promise<void> {
  const runs = new Map<string, R[]>(targets.map(t => [t.name, []]));
  for (let round = 1; round <= rounds; round++) {
    for (const target of targets) {
      const result = await measure(target);
      runs.get(target.name)!.push(result);
      report.print(`${target.name} #${round}`, result);
    }
  }
  console.log(`  medians of ${rounds} rounds (spread: rate, CPU µs):`);
  const peer = medianBy(runs.get("nginx") ?? [], report.rate);
  for (const [name, results] of runs) {
    report.print(name, medianBy(results, report.rate), name === "nginx" ? undefined : peer);
    console.log(
      `             ${spread(results, report.rate)} per second, CPU ${spread(results, report.cpuUs, 1)} µs`,
    );
  }
}
