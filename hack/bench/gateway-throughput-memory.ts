// The memory part of gateway-throughput.ts, in a process of its own: an in-process gateway applies
// a view of N hosts (one Ingress each, 1000 Services with 3 endpoints), then prints its RSS.
//   npx tsx hack/bench/gateway-throughput-memory.ts <hosts>
import type { V1EndpointSlice, V1Ingress } from "@kubernetes/client-node";
import { startDataPlane } from "../../gateway/data-plane";

const SERVICES = 1000;

function makeView(hosts: number) {
  const ingresses: V1Ingress[] = [];
  for (let i = 0; i < hosts; i++) {
    ingresses.push({
      metadata: {
        namespace: `ns-${i % 100}`,
        name: `site-${i}`,
        creationTimestamp: new Date(1_700_000_000_000 + i * 1000),
        annotations:
          i % 10 === 0 ? { "nginx.ingress.kubernetes.io/proxy-read-timeout": "30" } : undefined,
      },
      spec: {
        ingressClassName: "bulwark",
        rules: [
          {
            host: `host-${i}.example.com`,
            http: {
              paths: [
                {
                  path: "/",
                  pathType: "Prefix",
                  backend: { service: { name: `svc-${i % SERVICES}`, port: { number: 80 } } },
                },
                {
                  path: "/api",
                  pathType: "Prefix",
                  backend: {
                    service: {
                      name: `svc-${((i % SERVICES) + 100) % SERVICES}`,
                      port: { number: 80 },
                    },
                  },
                },
              ],
            },
          },
        ],
      },
    });
  }
  const endpointSlices: V1EndpointSlice[] = [];
  // Ingress i lives in ns-(i % 100) and names svc-(i % 1000) and a neighbour in the same namespace.
  for (let s = 0; s < SERVICES; s++) {
    endpointSlices.push({
      metadata: {
        namespace: `ns-${s % 100}`,
        name: `svc-${s}-x`,
        labels: { "kubernetes.io/service-name": `svc-${s}` },
      },
      addressType: "IPv4",
      ports: [{ port: 8080, protocol: "TCP" }],
      endpoints: [1, 2, 3].map(e => ({
        addresses: [`10.${s >> 8}.${s & 255}.${e}`],
        conditions: { ready: true },
      })),
    });
  }
  return { version: 1, ingresses, endpointSlices, tlsPairs: [] };
}

async function main(): Promise<void> {
  const hosts = Number(process.argv[2] ?? 10_000);
  const plane = await startDataPlane({ httpPort: 0, host: "127.0.0.1", defaultCertificates: [] });
  const before = process.memoryUsage().rss;
  const view = makeView(hosts);
  const started = performance.now();
  const applied = await plane.apply(view);
  const compileMs = performance.now() - started;
  global.gc?.();
  const rss = process.memoryUsage().rss;
  const stats = plane.status().table;
  console.log(
    `  ${String(hosts).padStart(7)} hosts: RSS ${(rss / 2 ** 20).toFixed(0)} MiB (empty gateway ${(before / 2 ** 20).toFixed(0)} MiB; view objects included), compile ${compileMs.toFixed(0)} ms, ${stats?.routes ?? 0} routes, ${stats?.backends ?? 0} backends, ${applied.problems.length} problems`,
  );
  await plane.close({ drainMs: 0 });
}

void main();
