// What Bulwark's pod metadata policy (capabilities/pod-permission/metadata-policy.ts) costs the
// API server per pod create as a tenant's pod carries more labels, against the same API server
// with the policy removed (the peer, same run). The API server's CEL tracks a comprehension's
// cost in time quadratic in its elements, so a policy that iterates a tenant's labels hands the
// tenant a CPU amplifier; the policy refuses maps over MAX_CHECKED_KEYS before iterating them.
//
//   npx tsx hack/bench/metadata-policy-cost.ts [--labels 10,100,500,501,10000,30000] [--rounds 3]
//
// About 2 min. Prints, per label count, the median create time and the API server's CPU per
// create (from /proc): with the policy as shipped, with its key rules alone (unbounded, as it was
// before 2026-12-07) and with no policy (the peer); and what the shipped policy answered.
import { KubernetesObjectApi, type KubernetesObject } from "@kubernetes/client-node";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { ensureBinaries, startControlPlane } from "../control-plane/control-plane";
import { applyOrThrow, loadKubeConfig } from "../control-plane/kube";
import { stopEverything } from "../control-plane/processes";
import {
  KEY_RULES,
  MAX_CHECKED_KEYS,
  metadataPolicyObjects,
  trustedWriters,
} from "../../capabilities/pod-permission/metadata-policy";
import { cpuMs, withChildren } from "./proc-cpu";
import { quantile } from "./stats";
import { asUser } from "../../test/harness/impersonation";

const { values } = parseArgs({
  options: { labels: { type: "string" }, rounds: { type: "string" } },
});
const COUNTS = (values.labels ?? `10,100,${MAX_CHECKED_KEYS},${MAX_CHECKED_KEYS + 1},10000,30000`)
  .split(",")
  .map(Number);
const ROUNDS = Number(values.rounds ?? 3);
const TENANT = "bench-tenant";
const NAMESPACE = "bench";

/** The API server as the benchmark's requests reach it: the administrator's credentials. */
type Cluster = Parameters<typeof asUser>[0];

/** A request as the tenant (impersonated by the administrator, as the integration tests act). */
function asTenant(cluster: Cluster, method: string, path: string, body?: unknown) {
  return asUser(cluster, TENANT, { method, path, body });
}

function labels(count: number): Record<string, string> {
  return Object.fromEntries(Array.from({ length: count }, (_, i) => [`l${i}.example.com/k`, "v"]));
}

interface Row {
  ms: number;
  cpuMs: number;
  answer: string;
}

/** ROUNDS creates of a pod with `count` labels, one at a time. */
async function creates(
  cluster: Cluster,
  apiServer: number[],
  count: number,
  tag: string,
): Promise<Row> {
  const times: number[] = [];
  const cpu: number[] = [];
  let answer = "";
  for (let round = 0; round < ROUNDS; round++) {
    const pod = {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: `${tag}-${count}-${round}`, labels: labels(count) },
      spec: { containers: [{ name: "app", image: "registry.example/app:1" }] },
    };
    const cpuBefore = cpuMs(apiServer);
    const start = performance.now();
    const reply = await asTenant(cluster, "POST", `/api/v1/namespaces/${NAMESPACE}/pods`, pod);
    times.push(performance.now() - start);
    cpu.push(cpuMs(apiServer) - cpuBefore);
    answer =
      reply.status === 201
        ? "201 created"
        : `${reply.status} ${(JSON.parse(reply.body) as { message?: string }).message?.replace(/^.*denied request: /, "") ?? ""}`;
  }
  const median = (xs: number[]) =>
    quantile(
      [...xs].sort((a, b) => a - b),
      0.5,
    );
  return { ms: median(times), cpuMs: median(cpu), answer };
}

/** Creates pods with `labels` until the API server answers `status` (a policy loads a moment late). */
async function untilAnswered(cluster: Cluster, podLabels: Record<string, string>, status: number) {
  for (let tries = 0; tries < 200; tries++) {
    const name = `probe-${tries}`;
    const reply = await asTenant(cluster, "POST", `/api/v1/namespaces/${NAMESPACE}/pods`, {
      metadata: { name, labels: podLabels },
      spec: { containers: [{ name: "app", image: "registry.example/app:1" }] },
    });
    if (reply.status === 201)
      await asTenant(cluster, "DELETE", `/api/v1/namespaces/${NAMESPACE}/pods/${name}`);
    if (reply.status === status) return;
    await new Promise(r => setTimeout(r, 100));
  }
  throw new Error(`the API server never answered ${status} to the probe pod`);
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "bulwark-bench-"));
  try {
    const cp = await startControlPlane({ dir, binDir: ensureBinaries() });
    const apiServer = withChildren(cp.processes.find(p => p.name === "kube-apiserver")!.pid);
    const admin = loadKubeConfig(cp.kubeconfigPath);
    const cluster: Cluster = { kc: admin, server: cp.server };
    const rbac = "rbac.authorization.k8s.io";
    await applyOrThrow(admin, [
      { apiVersion: "v1", kind: "Namespace", metadata: { name: NAMESPACE } },
      {
        apiVersion: `${rbac}/v1`,
        kind: "ClusterRole",
        metadata: { name: TENANT },
        rules: [{ apiGroups: [""], resources: ["pods"], verbs: ["create", "delete"] }],
      },
      {
        apiVersion: `${rbac}/v1`,
        kind: "ClusterRoleBinding",
        metadata: { name: TENANT },
        roleRef: { apiGroup: rbac, kind: "ClusterRole", name: TENANT },
        subjects: [{ apiGroup: rbac, kind: "User", name: TENANT }],
      },
    ] as KubernetesObject[]);
    const writers = trustedWriters("bulwark-system");
    const overBound = labels(MAX_CHECKED_KEYS + 1);
    const smuggled = { "permission.bulwark.dev/x": "y" };
    const sides: [string, () => Promise<void>][] = [
      [
        "policy",
        async () => {
          await applyOrThrow(admin, metadataPolicyObjects(writers) as KubernetesObject[]);
          await untilAnswered(cluster, overBound, 403);
        },
      ],
      [
        "unbounded",
        async () => {
          await applyOrThrow(
            admin,
            metadataPolicyObjects(writers, KEY_RULES) as KubernetesObject[],
          );
          await untilAnswered(cluster, overBound, 201);
          await untilAnswered(cluster, smuggled, 403);
        },
      ],
      [
        "peer",
        async () => {
          const objects = KubernetesObjectApi.makeApiClient(admin);
          for (const object of metadataPolicyObjects(writers)) await objects.delete(object);
          await untilAnswered(cluster, smuggled, 201);
        },
      ],
    ];
    const rows = new Map<string, Map<number, Row>>();
    for (const [side, install] of sides) {
      await install();
      const measured = new Map<number, Row>();
      for (const count of COUNTS)
        measured.set(count, await creates(cluster, apiServer, count, side));
      rows.set(side, measured);
    }
    console.log(
      `A tenant's pod create with N labels, ${ROUNDS} each, medians (ms; CPU: the API server's per create). ` +
        `policy: as shipped (bound ${MAX_CHECKED_KEYS}); unbounded: its key rules alone (as before 2026-12-07); peer: no policy`,
    );
    const head = ["labels", "policy", "CPU", "unbounded", "CPU", "peer", "CPU", "ratio"];
    console.log(`${head.map(h => h.padStart(9)).join(" ")}  the policy's answer`);
    for (const count of COUNTS) {
      const [on, unbounded, peer] = ["policy", "unbounded", "peer"].map(
        s => rows.get(s)!.get(count)!,
      );
      const cells = [
        count,
        on!.ms.toFixed(1),
        on!.cpuMs.toFixed(0),
        unbounded!.ms.toFixed(1),
        unbounded!.cpuMs.toFixed(0),
        peer!.ms.toFixed(1),
        peer!.cpuMs.toFixed(0),
        (on!.ms / peer!.ms).toFixed(2),
      ];
      console.log(
        `${cells.map(c => String(c).padStart(9)).join(" ")}  ${on!.answer.slice(0, 100)}`,
      );
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
