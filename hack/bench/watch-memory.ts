// What a watch of Bulwark's holds in memory, against the fluent client's Watch that Pepr's
// bindings use (the peer), in one process on one real API server, same objects:
//
//   npx tsx hack/bench/watch-memory.ts [--secrets 300 --secret-kb 64] [--tls 200] [--pods 3000]
//
// - Secrets: the watcher's Ingress guard needs the kubernetes.io/tls ones. Peer: two fluent
//   watches of every Secret, as Pepr opened for the two Secret bindings (created-or-updated,
//   deleted). Bulwark's: one list-watch (kube/list-watch.ts) narrowed to TLS by a field selector.
// - Pods: edge health caches every pod of the cluster, slimmed. Peer: a fluent watch feeding the
//   same slim map (the cache before 2026-12-06). Bulwark's: WatchCache on that list-watch.
// The handlers keep nothing in either case, or the same slim map, so the difference is what the
// watch itself holds. Heap after a full collection, before and after each watch has delivered
// everything.
import { CoreV1Api, type KubeConfig } from "@kubernetes/client-node";
import { K8s, kind } from "kubernetes-fluent-client";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { slimPod } from "../../core/edge";
import { WatchCache } from "../../kube/watch-cache";
import { TLS_SECRETS } from "../../capabilities/ingress-guard/tls-secrets";
import type { Pod } from "../../core/edge";
import { ApiClient } from "../../kube/api-client";
import { ListWatch, type Listed } from "../../kube/list-watch";
import { Reflector } from "../../kube/reflector";
import { ObjectCache } from "../../gateway/source/cache";
import { ensureBinaries, startControlPlane } from "../control-plane/control-plane";
import { loadKubeConfig } from "../control-plane/kube";
import { stopEverything } from "../control-plane/processes";
import { makeCertificate, tlsSecret } from "../../test/fixtures/certificates";
import { waitUntil } from "../../test/harness/wait";

const { values } = parseArgs({
  options: {
    secrets: { type: "string", default: "300" },
    "secret-kb": { type: "string", default: "64" },
    tls: { type: "string", default: "200" },
    pods: { type: "string", default: "3000" },
    // Internal: one measurement, in a process of its own (see main).
    variant: { type: "string" },
    kubeconfig: { type: "string" },
  },
});
const SECRETS = Number(values.secrets);
const SECRET_KB = Number(values["secret-kb"]);
const TLS = Number(values.tls);
const PODS = Number(values.pods);
const NS = "bench";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;
const mib = (bytes: number): string => (bytes / 2 ** 20).toFixed(1);

function heapUsed(): number {
  for (let i = 0; i < 3; i++) gc();
  return process.memoryUsage().heapUsed;
}

/** Runs `count` creates, 16 at a time, printing progress. */
async function createAll(what: string, count: number, create: (i: number) => Promise<unknown>) {
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      await create(i);
      if ((i + 1) % 500 === 0) console.log(`  ${what}: ${i + 1}/${count}`);
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
}

async function seed(kc: KubeConfig): Promise<void> {
  const core = kc.makeApiClient(CoreV1Api);
  await core.createNamespace({ body: { metadata: { name: NS } } });
  const blob = Buffer.alloc(SECRET_KB * 1024, "helm release ").toString("base64");
  await createAll("Opaque Secrets", SECRETS, i =>
    core.createNamespacedSecret({
      namespace: NS,
      body: { metadata: { name: `release-${i}` }, type: "Opaque", data: { release: blob } },
    }),
  );
  const cert = makeCertificate({ key: "ecdsa", dnsNames: ["*.example.com"], days: 30 });
  await createAll("TLS Secrets", TLS, i =>
    core.createNamespacedSecret({ namespace: NS, body: tlsSecret(NS, `tls-${i}`, cert) }),
  );
  await createAll("Pods", PODS, i =>
    core.createNamespacedPod({
      namespace: NS,
      body: {
        metadata: { name: `web-${i}`, labels: { app: "web", "pod-template-hash": "5d8f7c9b6" } },
        spec: {
          nodeName: `edge-${i % 20}`,
          containers: [
            {
              name: "app",
              image: "registry.example/app:1",
              env: [{ name: "MODE", value: "production" }],
              ports: [{ containerPort: 8080 }],
              resources: { requests: { cpu: "100m", memory: "128Mi" } },
            },
          ],
        },
      },
    }),
  );
}

interface Row {
  what: string;
  heldBytes: number;
  seen: number;
}

/** Heap held once `start` has delivered `expected` objects and `stop` has not run yet. */
async function held(
  what: string,
  expected: number,
  start: (seen: () => void) => Promise<() => Promise<void>>,
): Promise<Row> {
  const before = heapUsed();
  let seen = 0;
  const stop = await start(() => void seen++);
  await waitUntil(`${what}: ${expected} objects delivered`, () => seen >= expected, 300_000);
  const after = heapUsed();
  await stop();
  return { what, heldBytes: after - before, seen };
}

async function fluentWatches(count: number, model: typeof kind.Secret, onObject: () => void) {
  const watches = Array.from({ length: count }, () => K8s(model).Watch(() => onObject()));
  for (const watch of watches) await watch.start();
  return async () => {
    for (const watch of watches) watch.close();
  };
}

type Variant = "peer-secrets" | "lean-secrets" | "peer-pods" | "lean-pods" | "gateway-pods";

const VARIANTS: Record<Variant, (kc: KubeConfig) => Promise<Row>> = {
  "peer-secrets": () =>
    held("Secrets: Pepr's two fluent watches (peer)", 2 * (SECRETS + TLS), seen =>
      fluentWatches(2, kind.Secret, seen),
    ),
  "lean-secrets": kc =>
    held("Secrets: one lean TLS list-watch", TLS, async seen => {
      const listWatch = new ListWatch<Listed>(
        TLS_SECRETS,
        { put: seen, remove: () => {} },
        { client: new ApiClient(kc) },
      );
      listWatch.start();
      return () => listWatch.stop();
    }),
  "peer-pods": () =>
    held("Pods: fluent watch + slim map (peer)", PODS, async seen => {
      const slim = new Map<string, Pod>();
      const watch = K8s(kind.Pod).Watch(pod => {
        slim.set(`${pod.metadata?.namespace}/${pod.metadata?.name}`, slimPod(pod as Pod));
        seen();
      });
      await watch.start();
      return async () => watch.close();
    }),
  "lean-pods": kc =>
    held("Pods: WatchCache (lean list-watch + slim map)", PODS, async seen => {
      const cache = new WatchCache<Pod>({ path: "/api/v1/pods", what: "pods" }, { slim: slimPod });
      cache.follow(() => seen());
      cache.start(new ApiClient(kc));
      return () => cache.stop();
    }),
  // The gateway keeps what it watches whole (less managedFields): the same loop, its own sink.
  "gateway-pods": kc =>
    held("Pods: the gateway's reflector + ObjectCache", PODS, async seen => {
      const cache = new ObjectCache(() => seen());
      const reflector = new Reflector(
        new ApiClient(kc),
        { name: "pods", path: "/api/v1/pods" },
        cache.sink("ingress", undefined),
      );
      reflector.start();
      return () => reflector.stop();
    }),
};

/** Each measurement in a fresh process: what one watch left behind cannot count for the next. */
function measureApart(variant: Variant, kubeconfig: string): Row {
  const args = [...process.execArgv, __filename, ...process.argv.slice(2)];
  const child = spawnSync(
    process.execPath,
    [...args, `--variant=${variant}`, `--kubeconfig=${kubeconfig}`],
    { encoding: "utf8", env: { ...process.env, KUBECONFIG: kubeconfig } },
  );
  // The row is the one line that starts so; the watches' own log lines are JSON too.
  const line = child.stdout.split("\n").find(l => l.startsWith('{"what"'));
  if (child.status !== 0 || !line) throw new Error(`${variant} failed: ${child.stderr}`);
  return JSON.parse(line) as Row;
}

async function main(): Promise<void> {
  if (values.variant) {
    const kc = loadKubeConfig(values.kubeconfig!);
    const row = await VARIANTS[values.variant as Variant](kc);
    console.log(JSON.stringify(row));
    // The fluent client's watches leave timers behind their close().
    process.exit(0);
  }
  const dir = mkdtempSync(join(tmpdir(), "bulwark-watch-memory-"));
  try {
    const cp = await startControlPlane({ dir, binDir: ensureBinaries() });
    const kc = loadKubeConfig(cp.kubeconfigPath);
    console.log(
      `seeding ${SECRETS} Opaque Secrets of ${SECRET_KB} KiB, ${TLS} TLS Secrets, ${PODS} Pods`,
    );
    await seed(kc);
    const pairs: [Variant, ...Variant[]][] = [
      ["peer-secrets", "lean-secrets"],
      ["peer-pods", "lean-pods", "gateway-pods"],
    ];
    console.log("\nheap held by each watch after it delivered everything (after a full GC)");
    console.log("  what                                              objects   held MiB   vs peer");
    for (const [peerVariant, ...others] of pairs) {
      const peer = measureApart(peerVariant, cp.kubeconfigPath);
      const rows = others.map(variant => measureApart(variant, cp.kubeconfigPath));
      for (const row of [peer, ...rows]) {
        const ratio = (row.heldBytes / peer.heldBytes).toFixed(2);
        console.log(
          `  ${row.what.padEnd(48)}  ${String(row.seen).padStart(7)}   ${mib(row.heldBytes).padStart(8)}   ${ratio.padStart(7)}`,
        );
      }
    }
  } finally {
    await stopEverything();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch(error => {
  console.error(error);
  process.exitCode = 1;
});
