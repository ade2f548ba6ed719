// Gateway memory in all (`npx tsx hack/bench/gateway-memory.ts [hosts...]`, default 10000 100000):
// the control side's cache (objects as the API server lists them, slimmed as the watch does),
// the checksum guard in both modes, the composed view, and the data plane serving it, in one
// process per size; prints RSS and heap against the DESIGN.md target (≤ 1 GiB at 100k hosts).
// The peer in the same run is the data plane alone serving the same (slimmed) objects, as
// gateway-throughput-memory measures it: the difference is what the control side adds (its
// cache map, the guard's two trackers, the composed view).
import { execFileSync } from "node:child_process";
// Loaded as the gateway loads it (kube/workload-process.ts: its KubeConfig pulls in the whole
// generated client, about 40 MiB of heap at 100k hosts), so that every row counts it.
import { KubeConfig, type V1EndpointSlice, type V1Ingress } from "@kubernetes/client-node";
import { ConsistencyState } from "../../core/checksum/consistency-state";
import { startDataPlane } from "../../gateway/data-plane";
import { composeView } from "../../gateway/selection/compose";
import { ObjectCache } from "../../gateway/source/cache";
import { withoutBookkeeping } from "../../core/bookkeeping";
import type { KubeObject } from "../../kube/reflector";

void KubeConfig;

const SERVICES = 1000;

/** An Ingress as a list returns it: server metadata, managedFields, the last-applied annotation. */
function listedIngress(i: number): KubeObject {
  const spec = {
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
          ],
        },
      },
    ],
  };
  return {
    apiVersion: "networking.k8s.io/v1",
    kind: "Ingress",
    metadata: {
      name: `site-${i}`,
      namespace: `ns-${i % 100}`,
      uid: `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`,
      resourceVersion: String(1000 + i),
      generation: 1,
      creationTimestamp: "2026-01-01T00:00:00Z",
      annotations: {
        "nginx.ingress.kubernetes.io/version": "1",
        "kubectl.kubernetes.io/last-applied-configuration": JSON.stringify({ spec }),
      },
      managedFields: [
        {
          manager: "kubectl",
          operation: "Apply",
          apiVersion: "networking.k8s.io/v1",
          fieldsType: "FieldsV1",
          fieldsV1: { "f:spec": {} },
        },
      ],
    },
    spec,
  };
}

function slice(service: number): V1EndpointSlice {
  return {
    addressType: "IPv4",
    metadata: {
      name: `svc-${service}-1`,
      namespace: "ns-0",
      labels: { "kubernetes.io/service-name": `svc-${service}` },
    },
    endpoints: [1, 2, 3].map(n => ({
      addresses: [`10.0.${service % 250}.${n}`],
      conditions: { ready: true },
    })),
    ports: [{ port: 8080 }],
  };
}

const mib = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(0)} MiB`;

async function measure(hosts: number, controlSide: boolean): Promise<void> {
  const objects = Array.from({ length: hosts }, (_, i) => listedIngress(i));
  const dataPlane = await startDataPlane({ httpPort: 0, host: "127.0.0.1" });
  const slices = Array.from({ length: SERVICES }, (_, s) => slice(s));
  let ingresses: V1Ingress[];
  if (controlSide) {
    const guard = new ConsistencyState();
    const cache = new ObjectCache(
      change => change.object && guard.observeObject("ingress", change.object as never),
    );
    const sink = cache.sink("ingress", undefined);
    sink.listPage(objects, true);
    sink.listed();
    objects.length = 0;
    const composed = composeView({
      ordinal: 0,
      ingresses: cache.map("ingress").values() as Iterable<V1Ingress>,
      secrets: new Map(),
      endpointSlices: slices,
      services: [],
      classClaimed: true,
      scope: guard.scope,
      guard: { ingress: "off", secret: "off" },
      previous: undefined,
    });
    ingresses = composed.state?.view.ingresses ?? [];
  } else {
    ingresses = objects.map(o => withoutBookkeeping(o) as V1Ingress);
    objects.length = 0;
  }
  await dataPlane.apply({ version: 1, ingresses, tlsPairs: [], endpointSlices: slices });
  global.gc?.();
  const usage = process.memoryUsage();
  console.log(JSON.stringify({ hosts, controlSide, rss: usage.rss, heap: usage.heapUsed }));
  await dataPlane.close({ drainMs: 0 });
}

function run(hosts: number, controlSide: boolean): { rss: number; heap: number } {
  const out = execFileSync(
    process.execPath,
    ["--expose-gc", "--import", "tsx", __filename, "--child", String(hosts), String(controlSide)],
    {
      encoding: "utf8",
    },
  );
  const line = out.trim().split("\n").pop() ?? "{}";
  return JSON.parse(line) as { rss: number; heap: number };
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  if (args[0] === "--child") return measure(Number(args[1]), args[2] === "true");
  const sizes = args.map(Number).filter(n => n > 0);
  if (sizes.length === 0) sizes.push(10_000, 100_000);
  console.log(
    "gateway memory in all (target ≤ 1 GiB RSS at 100k hosts); checksum guard on for Ingresses",
  );
  for (const hosts of sizes) {
    const all = run(hosts, true);
    const dataPlaneOnly = run(hosts, false);
    console.log(
      `  ${String(hosts).padStart(6)} hosts: gateway RSS ${mib(all.rss)} (heap ${mib(all.heap)}); ` +
        `peer, data plane alone: RSS ${mib(dataPlaneOnly.rss)}; control side ${mib(all.rss - dataPlaneOnly.rss)}; ` +
        `${(all.rss / 2 ** 30).toFixed(2)} × 1 GiB`,
    );
  }
}

main().then(
  () => process.exit(0),
  error => {
    console.error(error);
    process.exit(1);
  },
);
