// Gateway change propagation (`npx tsx hack/bench/gateway-propagation.ts [sizes...]`, default
// 1000 20000): a real kube-apiserver + etcd of its own, N Ingresses of class bulwark, one gateway
// process (bulwark-gateway-0). Measures, per size:
//   create   Ingress POST sent → first request with its host answered by its backend
//   update   Ingress PUT (backend switched) sent → first request answered by the new backend
// p50/p99 against the DESIGN.md target (p99 ≤ 500 ms at 20k Ingresses), the time to serve the
// first view, and the gateway's RSS. The peer in the same run is the API server itself: the time
// from the write to its watch event reaching a bare watch client, which no gateway can beat.
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, request, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CoreV1Api, NetworkingV1Api, Watch, type V1Ingress } from "@kubernetes/client-node";
import { ensureBinaries, startControlPlane } from "../control-plane/control-plane";
import { applyOrThrow, loadKubeConfig } from "../control-plane/kube";
import { freePort } from "../control-plane/ports";
import {
  ingressClass,
  machineAddress,
  startGatewayProcess,
  waitReady,
} from "../local-stack/gateway";

const NS = "bench";
const SAMPLES = 60;
const CONCURRENCY = 24;

async function backend(name: string): Promise<{ port: number; server: Server }> {
  const server = createServer((_req, res) =>
    res.writeHead(200, { "content-length": name.length }).end(name),
  );
  await new Promise<void>(resolve => server.listen(0, machineAddress(), resolve));
  const address = server.address();
  return { port: typeof address === "object" && address ? address.port : 0, server };
}

function ingress(name: string, host: string, service: string): V1Ingress {
  return {
    apiVersion: "networking.k8s.io/v1",
    kind: "Ingress",
    metadata: { name, namespace: NS },
    spec: {
      ingressClassName: "bulwark",
      rules: [
        {
          host,
          http: {
            paths: [
              {
                path: "/",
                pathType: "Prefix",
                backend: { service: { name: service, port: { number: 80 } } },
              },
            ],
          },
        },
      ],
    },
  };
}

function slice(service: string, port: number) {
  return {
    apiVersion: "discovery.k8s.io/v1",
    kind: "EndpointSlice",
    metadata: {
      name: `${service}-1`,
      namespace: NS,
      labels: { "kubernetes.io/service-name": service },
    },
    addressType: "IPv4",
    endpoints: [{ addresses: [machineAddress()], conditions: { ready: true } }],
    ports: [{ name: "http", port, protocol: "TCP" }],
  };
}

function body(port: number, host: string): Promise<string> {
  return new Promise(resolve => {
    const req = request(
      { host: "127.0.0.1", port, path: "/", headers: { host }, timeout: 2000 },
      res => {
        let text = "";
        res.on("data", (c: Buffer) => (text += c.toString()));
        res.on("end", () => resolve(res.statusCode === 200 ? text : `${res.statusCode}`));
      },
    );
    req.on("error", () => resolve("error"));
    req.on("timeout", () => req.destroy());
    req.end();
  });
}

/** Polls until `host` answers `expected`; returns the ms since `since`. */
async function until(port: number, host: string, expected: string, since: number): Promise<number> {
  const deadline = since + 30_000;
  while (performance.now() < deadline) {
    if ((await body(port, host)) === expected) return performance.now() - since;
    await new Promise(r => setTimeout(r, 2));
  }
  throw new Error(`${host} never answered ${expected}`);
}

async function createMany(api: NetworkingV1Api, from: number, to: number): Promise<void> {
  let next = from;
  const worker = async (): Promise<void> => {
    while (next < to) {
      const i = next++;
      await api.createNamespacedIngress({
        namespace: NS,
        body: ingress(`site-${i}`, `site-${i}.example.com`, "blue"),
      });
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

const fmt = (ms: number): string => `${ms.toFixed(1)} ms`;

async function rss(adminPort: number): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${adminPort}/metrics`)).text();
  const match = /^bulwark_gateway_process_resident_memory_bytes (\d+)/m.exec(text);
  return Number(match?.[1] ?? NaN) / 2 ** 20;
}

/** The peer: write → watch event at a bare watch client, per sample. */
async function watchLatency(
  kc: ReturnType<typeof loadKubeConfig>,
  api: NetworkingV1Api,
  size: number,
): Promise<number[]> {
  const seen = new Map<string, number>();
  const controller = await new Watch(kc).watch(
    `/apis/networking.k8s.io/v1/namespaces/${NS}/ingresses`,
    { resourceVersion: "0" },
    (type, object: V1Ingress) => {
      if (type === "ADDED" && object.metadata?.name)
        seen.set(object.metadata.name, performance.now());
    },
    () => {},
  );
  const samples: number[] = [];
  for (let i = 0; i < 20; i++) {
    const name = `peer-${size}-${i}`;
    const sent = performance.now();
    await api.createNamespacedIngress({
      namespace: NS,
      body: ingress(name, `${name}.example.com`, "blue"),
    });
    while (!seen.has(name)) await new Promise(r => setTimeout(r, 1));
    samples.push((seen.get(name) ?? sent) - sent);
  }
  controller.abort();
  return samples;
}

/** The create and update samples at one size, with the peer's watch latency. */
async function sample(
  api: NetworkingV1Api,
  kc: ReturnType<typeof loadKubeConfig>,
  at: { size: number; httpPort: number; adminPort: number },
): Promise<void> {
  const { size, httpPort, adminPort } = at;
  const creates: number[] = [];
  const updates: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    const name = `probe-${size}-${i}`;
    const host = `${name}.example.com`;
    const sent = performance.now();
    await api.createNamespacedIngress({ namespace: NS, body: ingress(name, host, "blue") });
    creates.push(await until(httpPort, host, "blue", sent));
    const current = await api.readNamespacedIngress({ name, namespace: NS });
    const changed = { ...current, spec: ingress(name, host, "green").spec };
    const updated = performance.now();
    await api.replaceNamespacedIngress({ name, namespace: NS, body: changed });
    updates.push(await until(httpPort, host, "green", updated));
  }
  const peer = await watchLatency(kc, api, size);
  const line = (what: string, v: number[]): string =>
    `  ${what.padEnd(28)} p50 ${fmt(percentile(v, 50)).padStart(9)}  p99 ${fmt(percentile(v, 99)).padStart(9)}`;
  console.log(line("create → served", creates));
  console.log(line("update → served", updates));
  console.log(line("peer: write → watch event", peer));
  const p99 = Math.max(percentile(creates, 99), percentile(updates, 99));
  console.log(
    `  p99 ${fmt(p99)} vs target 500 ms: ${p99 <= 500 ? "met" : "MISSED"} (${(p99 / 500).toFixed(2)} × target); RSS ${(await rss(adminPort)).toFixed(0)} MiB`,
  );
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const workersAt = args.indexOf("--workers");
  // The shipped default (values: gateway.workers); each worker compiles every view itself.
  const workers = workersAt < 0 ? 2 : Number(args.splice(workersAt, 2)[1]);
  if (!Number.isInteger(workers) || workers < 1)
    throw new Error("--workers: expected a positive integer");
  const sizes = args.map(Number).filter(n => n > 0);
  if (sizes.length === 0) sizes.push(1000, 20_000);
  const dir = mkdtempSync(join(tmpdir(), "bench-propagation-"));
  const cp = await startControlPlane({ dir: join(dir, "cluster"), binDir: ensureBinaries() });
  const [blue, green] = [await backend("blue"), await backend("green")];
  try {
    const kc = loadKubeConfig(cp.kubeconfigPath);
    await kc.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: NS } } });
    await applyOrThrow(kc, [ingressClass(), slice("blue", blue.port), slice("green", green.port)]);
    const api = kc.makeApiClient(NetworkingV1Api);
    let created = 0;
    console.log(
      `gateway change propagation (target: p99 ≤ 500 ms at 20k Ingresses), ${workers} worker(s), ${SAMPLES} samples each`,
    );
    for (const size of sizes) {
      const started = performance.now();
      await createMany(api, created, size);
      created = size;
      console.log(`\n${size} Ingresses created in ${fmt(performance.now() - started)}`);
      const [httpPort, adminPort] = [await freePort(), await freePort()];
      const gateway = startGatewayProcess({
        kubeconfigPath: cp.kubeconfigPath,
        podName: "bulwark-gateway-0",
        stateDir: join(dir, `state-${size}`),
        logFile: join(dir, `gateway-${size}.log`),
        env: {
          LOG_LEVEL: "warn",
          BULWARK_WORKERS: String(workers),
          BULWARK_HTTP_PORT: String(httpPort),
          BULWARK_HTTPS_PORT: String(await freePort()),
          BULWARK_ADMIN_PORT: String(adminPort),
        },
      });
      try {
        const boot = performance.now();
        await waitReady(`http://127.0.0.1:${adminPort}/readyz`, gateway, 300_000);
        await until(httpPort, `site-${size - 1}.example.com`, "blue", boot);
        console.log(
          `  first view served ${fmt(performance.now() - boot)} after start; gateway RSS ${(await rss(adminPort)).toFixed(0)} MiB`,
        );
        await sample(api, kc, { size, httpPort, adminPort });
      } finally {
        await gateway.stop();
      }
    }
  } finally {
    blue.server.close();
    green.server.close();
    await cp.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  error => {
    console.error(error);
    process.exit(1);
  },
);
