// Admission latency of an Ingress create through the real API server with 10k Ingresses stored.
// Peer, same run, same API server: creates in pepr-system, which the webhook configuration
// excludes, so the difference is what Bulwark's admission adds.
//
//   npx tsx hack/bench/admission.ts [--stored 10000] [--creates 1000]
import { NetworkingV1Api, CoreV1Api, type V1Ingress } from "@kubernetes/client-node";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { buildModule, ROOT } from "../../packaging/build";
import { ensureBinaries, startControlPlane } from "../control-plane/control-plane";
import { loadKubeConfig } from "../control-plane/kube";
import { startPeprModule } from "../control-plane/pepr-module";
import { stopEverything } from "../control-plane/processes";
import { installCrds } from "../install-crds";
import { makeCertificate, tlsSecret } from "../../test/fixtures/certificates";

const { values } = parseArgs({
  options: { stored: { type: "string" }, creates: { type: "string" } },
});
const STORED = Number(values.stored ?? 10_000);
const CREATES = Number(values.creates ?? 1_000);

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

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

async function timedCreates(
  api: NetworkingV1Api,
  namespace: string,
  prefix: string,
): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < CREATES; i++) {
    const start = process.hrtime.bigint();
    await api.createNamespacedIngress({ namespace, body: ingress(`${prefix}-${i}`) });
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  return times.sort((a, b) => a - b);
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

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "bulwark-bench-"));
  try {
    const binDir = ensureBinaries();
    buildModule({ quiet: true });
    const cp = await startControlPlane({ dir, binDir });
    await installCrds(cp.kubeconfigPath);
    await startPeprModule(cp, { root: ROOT });
    const kc = loadKubeConfig(cp.kubeconfigPath);
    const core = kc.makeApiClient(CoreV1Api);
    const networking = kc.makeApiClient(NetworkingV1Api);
    const cert = makeCertificate({ key: "ecdsa", dnsNames: ["*.example.com"], days: 30 });
    for (const namespace of ["bench", "pepr-system"]) {
      if (namespace !== "pepr-system")
        await core.createNamespace({ body: { metadata: { name: namespace } } });
      await core.createNamespacedSecret({
        namespace,
        body: tlsSecret(namespace, "wildcard", cert),
      });
    }
    console.log(`seeding ${STORED} Ingresses through the webhook (16 at a time)`);
    const seedStart = Date.now();
    await seed(networking, "bench");
    console.log(`  seeded in ${((Date.now() - seedStart) / 1000).toFixed(1)} s`);

    // Both run against the same API server state, one after the other.
    const withWebhook = await timedCreates(networking, "bench", "measured");
    const withoutWebhook = await timedCreates(networking, "pepr-system", "peer");
    const rows = [
      ["Bulwark admission (webhook called)", withWebhook],
      ["peer: same API server, no webhook", withoutWebhook],
    ] as const;
    console.log(
      `\nIngress create latency, ${CREATES} sequential creates, ${STORED} Ingresses stored, Node ${process.version}`,
    );
    console.log("what                                        p50 ms   p99 ms   max ms");
    for (const [what, t] of rows) {
      console.log(
        `${what.padEnd(42)} ${percentile(t, 50).toFixed(2).padStart(7)} ${percentile(t, 99).toFixed(2).padStart(8)} ${t[t.length - 1]!.toFixed(2).padStart(8)}`,
      );
    }
    const added50 = percentile(withWebhook, 50) - percentile(withoutWebhook, 50);
    const added99 = percentile(withWebhook, 99) - percentile(withoutWebhook, 99);
    console.log(
      `\nadded by admission: p50 ${added50.toFixed(2)} ms, p99 ${added99.toFixed(2)} ms; ratio p50 ${(percentile(withWebhook, 50) / percentile(withoutWebhook, 50)).toFixed(2)}x`,
    );
  } finally {
    await stopEverything();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch(error => {
  console.error(error);
  process.exitCode = 1;
});
