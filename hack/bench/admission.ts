// What Bulwark's admission adds to the writes it sees, through the real API server with 10k
// Ingresses stored: Ingress, TLS Secret and annotated Pod creates (each calls a webhook), and
// Pods without the annotation (which the webhooks' matchConditions leave out: they should add
// nothing). Peer, same run, same API server: the same creates in pepr-system, which every
// webhook's namespaceSelector excludes, so the difference is what Bulwark's admission adds.
//
//   npx tsx hack/bench/admission.ts [--stored 10000] [--creates 1000] [--rate 100 --seconds 10]
//                                   [--profile DIR]
//
// --rate: after the sequential creates, the same writes started at a fixed rate (open loop: a
// slow answer does not slow the next start), which is what a busy cluster does.
// --profile: the Pepr processes run with --cpu-prof; their profiles land in DIR at exit
// (summarize them with profile-summary.ts).
import {
  CoreV1Api,
  NetworkingV1Api,
  type KubeConfig,
  type V1Ingress,
  type V1Pod,
} from "@kubernetes/client-node";
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { parseArgs } from "node:util";
import { PERMISSION_GROUP_ANNOTATION } from "../../core/names";
import { buildModule, ROOT } from "../../packaging/build";
import { ensureBinaries, startControlPlane } from "../control-plane/control-plane";
import { loadKubeConfig } from "../control-plane/kube";
import { startPeprModule } from "../control-plane/pepr-module";
import { stopEverything } from "../control-plane/processes";
import { installCrds } from "../install-crds";
import { makeCertificate, tlsSecret, type TestCertificate } from "../../test/fixtures/certificates";
import { createPermissionGroup } from "../../test/harness/cluster";

const { values } = parseArgs({
  options: {
    stored: { type: "string" },
    creates: { type: "string" },
    rate: { type: "string" },
    seconds: { type: "string" },
    profile: { type: "string" },
  },
});
const STORED = Number(values.stored ?? 10_000);
const CREATES = Number(values.creates ?? 1_000);
const RATE = values.rate === undefined ? undefined : Number(values.rate);
const RATE_SECONDS = Number(values.seconds ?? 10);
const MEASURED = "bench";
const PEER = "pepr-system";
const GROUP = "bench-readers";

function ingress(name: string): V1Ingress {
  return {
    metadata: {
      name,
      annotations: {
        "nginx.ingress.kubernetes.io/version": "1",
        "nginx.ingress.kubernetes.io/enable-cors": "true",
        "nginx.ingress.kubernetes.io/proxy-read-timeout": "30",
      },
    },
    spec: {
      ingressClassName: "bulwark",
      tls: [{ hosts: [`${name}.example.com`], secretName: "wildcard" }],
      rules: [
        {
          host: `${name}.example.com`,
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

function pod(name: string, annotated: boolean): V1Pod {
  return {
    metadata: {
      name,
      annotations: annotated ? { [PERMISSION_GROUP_ANNOTATION]: GROUP } : undefined,
    },
    spec: {
      serviceAccountName: "default",
      automountServiceAccountToken: false,
      containers: [{ name: "app", image: "registry.example/app:1" }],
    },
  };
}

/** One kind of write: how to create the i-th object in a namespace. */
interface Write {
  what: string;
  create(namespace: string, name: string): Promise<unknown>;
}

function writes(kc: KubeConfig, cert: TestCertificate): Write[] {
  const core = kc.makeApiClient(CoreV1Api);
  const networking = kc.makeApiClient(NetworkingV1Api);
  return [
    {
      what: "Ingress create",
      create: (namespace, name) =>
        networking.createNamespacedIngress({ namespace, body: ingress(name) }),
    },
    {
      what: "TLS Secret create",
      create: (namespace, name) =>
        core.createNamespacedSecret({ namespace, body: tlsSecret(namespace, name, cert) }),
    },
    {
      what: "Pod create, permission group annotated",
      create: (namespace, name) => core.createNamespacedPod({ namespace, body: pod(name, true) }),
    },
    {
      what: "Pod create, no annotation",
      create: (namespace, name) => core.createNamespacedPod({ namespace, body: pod(name, false) }),
    },
  ];
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

async function timed(work: () => Promise<unknown>): Promise<number> {
  const start = process.hrtime.bigint();
  await work();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

/** `count` creates one after the other; latencies sorted, in ms. */
async function sequential(write: Write, namespace: string, prefix: string): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < CREATES; i++) {
    times.push(await timed(() => write.create(namespace, `${prefix}-${i}`)));
  }
  return times.sort((a, b) => a - b);
}

/** Creates started every 1/rate s for `seconds`, whatever the answers' pace; latencies sorted. */
async function paced(
  write: Write,
  namespace: string,
  prefix: string,
  rate: number,
): Promise<{ times: number[]; lateStarts: number }> {
  const started: Promise<number>[] = [];
  const begin = performance.now();
  let lateStarts = 0;
  for (let i = 0; i < rate * RATE_SECONDS; i++) {
    const due = begin + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    else if (wait < -5) lateStarts++;
    started.push(timed(() => write.create(namespace, `${prefix}-${i}`)));
  }
  const times = await Promise.all(started);
  return { times: times.sort((a, b) => a - b), lateStarts };
}

async function seed(api: NetworkingV1Api, namespace: string): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < STORED) {
      const i = next++;
      await api.createNamespacedIngress({ namespace, body: ingress(`stored-${i}`) });
      if (i % 2000 === 0) console.log(`  stored ${i}/${STORED}`);
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
}

function line(what: string, t: number[]): string {
  return `  ${what.padEnd(30)} ${percentile(t, 50).toFixed(2).padStart(7)} ${percentile(t, 99).toFixed(2).padStart(8)} ${t[t.length - 1]!.toFixed(2).padStart(8)}`;
}

function report(what: string, measured: number[], peer: number[]): void {
  const added = (p: number) => (percentile(measured, p) - percentile(peer, p)).toFixed(2);
  console.log(`${what}\n  what                              p50 ms   p99 ms   max ms`);
  console.log(line("Bulwark admission", measured));
  console.log(line(`peer: in ${PEER}, no webhook`, peer));
  console.log(
    `  added by admission: p50 ${added(50)} ms, p99 ${added(99)} ms (target p99 ≤ 10 ms)`,
  );
}

async function measure(kc: KubeConfig, cert: TestCertificate): Promise<void> {
  console.log(
    `\n${CREATES} sequential creates per kind, ${STORED} Ingresses stored, Node ${process.version}, load average ${loadavg()
      .map(l => l.toFixed(2))
      .join(" ")}`,
  );
  for (const [k, write] of writes(kc, cert).entries()) {
    // Both run against the same API server state, one after the other.
    const measured = await sequential(write, MEASURED, `m${k}`);
    const peer = await sequential(write, PEER, `p${k}`);
    report(write.what, measured, peer);
  }
  if (RATE === undefined) return;
  console.log(`\nat ${RATE} creates/s for ${RATE_SECONDS} s (open loop)`);
  for (const [k, write] of writes(kc, cert).entries()) {
    const measured = await paced(write, MEASURED, `rm${k}`, RATE);
    const peer = await paced(write, PEER, `rp${k}`, RATE);
    report(write.what, measured.times, peer.times);
    const late = measured.lateStarts + peer.lateStarts;
    if (late > 0) console.log(`  (${late} creates started more than 5 ms late: the client lagged)`);
  }
  console.log(
    `load average after: ${loadavg()
      .map(l => l.toFixed(2))
      .join(" ")}`,
  );
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "bulwark-bench-"));
  try {
    const binDir = ensureBinaries();
    buildModule({ quiet: true });
    const cp = await startControlPlane({ dir, binDir });
    await installCrds(cp.kubeconfigPath);
    const profileDir = values.profile === undefined ? undefined : resolve(values.profile);
    const nodeFlags = profileDir ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`] : [];
    await startPeprModule(cp, { root: ROOT, nodeFlags });
    const kc = loadKubeConfig(cp.kubeconfigPath);
    const core = kc.makeApiClient(CoreV1Api);
    const cert = makeCertificate({ key: "ecdsa", dnsNames: ["*.example.com"], days: 30 });
    await core.createNamespace({ body: { metadata: { name: MEASURED } } });
    // Without a controller manager the API server admits pods without ServiceAccounts.
    for (const namespace of [MEASURED, PEER]) {
      await core.createNamespacedSecret({
        namespace,
        body: tlsSecret(namespace, "wildcard", cert),
      });
    }
    await createPermissionGroup({ kc }, MEASURED, GROUP);
    console.log(`seeding ${STORED} Ingresses through the webhook (16 at a time)`);
    const seedStart = Date.now();
    await seed(kc.makeApiClient(NetworkingV1Api), MEASURED);
    console.log(`  seeded in ${((Date.now() - seedStart) / 1000).toFixed(1)} s`);
    await measure(kc, cert);
  } finally {
    await stopEverything();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch(error => {
  console.error(error);
  process.exitCode = 1;
});
