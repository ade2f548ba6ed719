// What Bulwark's admission adds to the writes it sees, through the real API server with 10k
// Ingresses stored: Ingress, TLS Secret and annotated Pod creates (each calls a webhook), and
// Pods without the annotation (which the webhooks' matchConditions leave out: they should add
// nothing). Peer, same run, same API server: the same creates in pepr-system, which every
// webhook's namespaceSelector excludes, so the difference is what Bulwark's admission adds.
// Annotated Pods have two more peers: the pod as admitted (what storing the larger pod costs) and
// the floor webhook (the same registration answering Bulwark's patch and doing nothing else: what
// any webhook of that shape adds on this API server, so what is Bulwark's own is the rest).
//
//   npx tsx hack/bench/admission.ts [--stored 10000] [--creates 1000] [--rate 100 --seconds 10]
//                                   [--profile DIR] [--pepr-flags=--trace-gc] [--log-level warn]
//                                   [--apiserver-profile DIR] [--only "annotated"]
//                                   [--client kept-alive|per-request] [--writer tenant|admin]
//
// --rate: after the sequential creates, the same writes started at a fixed rate (open loop: a
// slow answer does not slow the next start), which is what a busy cluster does.
// --profile: the Pepr processes run with their inspector on (127.0.0.1, a free port), and each
// kind's sequential creates are profiled in each (DIR/<kind>-admission.cpuprofile, -watcher);
// summarize them with profile-summary.ts. Needs Node 22 or later (the global WebSocket).
// --pepr-flags: more Node flags for both Pepr processes; --log-level: their LOG_LEVEL (info).
// --apiserver-profile: a 20 s CPU profile of the API server (/debug/pprof) at the start of each
// kind's sequential creates, saved in DIR (read with `go tool pprof -top FILE`).
// --only: measure only the kinds whose name contains this text (a profile of one kind's creates).
// --client: how the creates reach the API server. kept-alive (the default): one connection, reused,
// as a controller's client-go keeps one. per-request: client-node's own way, a new TLS connection
// per create, whose handshakes (both ends) the benchmark measured until 2026-12-07.
// --writer: who creates. tenant (the default): a user RBAC lets create the kinds measured, as the
// controllers and CI systems that create pods and Ingresses are. admin: system:masters, whom
// Bulwark's pod metadata policy exempts (so it costs less than for anyone else); the benchmark
// wrote as admin until 2026-12-07.
import {
  AdmissionregistrationV1Api,
  CoreV1Api,
  createConfiguration,
  NetworkingV1Api,
  ServerConfiguration,
  KubeConfig,
  type KubernetesObject,
  type RequestContext,
  type V1Ingress,
  type V1Pod,
} from "@kubernetes/client-node";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { randomUUID } from "node:crypto";
import { Agent, request, type RequestOptions } from "node:https";
import { loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { parseArgs } from "node:util";
import { PERMISSION_GROUP_ANNOTATION } from "../../core/names";
import { buildModule, ROOT } from "../../packaging/build";
import {
  ensureBinaries,
  kubeconfigFor,
  startControlPlane,
  type ControlPlane,
} from "../control-plane/control-plane";
import { issueCertificate, issueLoopbackServingCertificate } from "../control-plane/pki";
import { applyOrThrow, loadKubeConfig } from "../control-plane/kube";
import { startPeprModule } from "../control-plane/pepr-module";
import { stopEverything } from "../control-plane/processes";
import { installCrds } from "../install-crds";
import { makeCertificate, tlsSecret, type TestCertificate } from "../../test/fixtures/certificates";
import { apiServerMetrics, createPermissionGroup } from "../../test/harness/cluster";
import { cpuMs, withChildren } from "./proc-cpu";
import { differenceInterval, quantile } from "./stats";
import { KeptAliveApi } from "../../kube/kept-alive-api";
import { startListeningChild, stopChild } from "./tls-peers";
import { InspectorProfiler, inspectorUrl } from "./inspector-profile";

const { values } = parseArgs({
  options: {
    stored: { type: "string" },
    creates: { type: "string" },
    rate: { type: "string" },
    seconds: { type: "string" },
    profile: { type: "string" },
    "pepr-flags": { type: "string" },
    "log-level": { type: "string" },
    "apiserver-profile": { type: "string" },
    only: { type: "string" },
    client: { type: "string" },
    writer: { type: "string" },
  },
});
if (![undefined, "kept-alive", "per-request"].includes(values.client))
  throw new Error(`--client: ${values.client}: expected kept-alive or per-request`);
if (![undefined, "tenant", "admin"].includes(values.writer))
  throw new Error(`--writer: ${values.writer}: expected tenant or admin`);
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

function pod(name: string, annotated: boolean, labels?: Record<string, string>): V1Pod {
  return {
    metadata: {
      name,
      labels,
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
  /**
   * The object as admission left it (mutated), created where no webhook sees it: what storing the
   * larger object costs, apart from the webhook calls. Only for writes that are mutated.
   */
  createAdmitted?(name: string): Promise<unknown>;
  /**
   * The same object created where only the floor webhook sees it (registered as Bulwark's is,
   * answering Bulwark's patch and doing nothing else): what any webhook of this shape costs.
   */
  createFloored?(name: string): Promise<unknown>;
}

/**
 * An annotated pod as Bulwark's admission stores it (the init container, the token volume, the
 * finalizer, Pepr's annotation), read back from one created through the webhooks; server-set
 * fields removed so that it can be created again under another name.
 */
async function admittedPodShape(core: CoreV1Api): Promise<V1Pod> {
  const name = "admitted-shape";
  await core.createNamespacedPod({ namespace: MEASURED, body: pod(name, true) });
  const stored = await core.readNamespacedPod({ namespace: MEASURED, name });
  const { labels, annotations, finalizers } = stored.metadata ?? {};
  return { metadata: { labels, annotations, finalizers }, spec: stored.spec };
}

function writes(kc: KubeConfig, cert: TestCertificate, admittedPod: V1Pod): Write[] {
  return allWrites(kc, cert, admittedPod).filter(w => w.what.includes(values.only ?? ""));
}

/**
 * The writers' API clients. client-node builds a new https.Agent for each request, so each create
 * would open (and the API server accept) a TLS connection; with --client kept-alive (the default)
 * every request of the run goes on one kept-alive agent instead.
 */
function writeClients(kc: KubeConfig): { core: CoreV1Api; networking: NetworkingV1Api } {
  if (values.client === "per-request")
    return { core: kc.makeApiClient(CoreV1Api), networking: kc.makeApiClient(NetworkingV1Api) };
  let agent: Agent | undefined;
  const keptAlive = {
    getName: () => "kept-alive",
    async applySecurityAuthentication(context: RequestContext): Promise<void> {
      await kc.applySecurityAuthentication(context);
      agent ??= new Agent({ ...(context.getAgent() as Agent).options, keepAlive: true });
      context.setAgent(agent);
    },
  };
  const configuration = createConfiguration({
    baseServer: new ServerConfiguration(kc.getCurrentCluster()!.server, {}),
    authMethods: { default: keptAlive },
  });
  return { core: new CoreV1Api(configuration), networking: new NetworkingV1Api(configuration) };
}

function allWrites(kc: KubeConfig, cert: TestCertificate, admittedPod: V1Pod): Write[] {
  const { core, networking } = writeClients(kc);
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
      createAdmitted: name =>
        core.createNamespacedPod({
          namespace: PEER,
          body: { ...admittedPod, metadata: { ...admittedPod.metadata, name: `${name}-admitted` } },
        }),
      createFloored: name =>
        core.createNamespacedPod({ namespace: PEER, body: pod(`${name}-floored`, true, FLOORED) }),
    },
    {
      what: "Pod create, no annotation",
      create: (namespace, name) => core.createNamespacedPod({ namespace, body: pod(name, false) }),
    },
  ];
}

/** Nearest rank, as stats.ts's quantile (until 2026-12-06 this took the rank above it). */
function percentile(sorted: number[], p: number): number {
  return quantile(sorted, p / 100);
}

async function timed(work: () => Promise<unknown>): Promise<number> {
  const start = process.hrtime.bigint();
  await work();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

/**
 * `CREATES` creates in each namespace, one after the other, alternating between the two: the
 * machine's slow spells last longer than two creates, so each side sees the same spells, which
 * two runs one after the other would not. Latencies sorted, in ms.
 */
/** One run's latencies per side, sorted, in ms. */
interface Sides {
  measured: number[];
  peer: number[];
  admitted?: number[];
  floored?: number[];
}

async function alternating(write: Write, prefix: string): Promise<Sides> {
  const times: Required<Sides> = { measured: [], peer: [], admitted: [], floored: [] };
  const { createAdmitted, createFloored } = write;
  type Side = [create: (name: string) => Promise<unknown>, times: number[]];
  const sides: Side[] = [
    [name => write.create(MEASURED, name), times.measured],
    [name => write.create(PEER, name), times.peer],
  ];
  if (createAdmitted) sides.push([createAdmitted, times.admitted]);
  if (createFloored) sides.push([createFloored, times.floored]);
  for (let i = 0; i < CREATES; i++) {
    // Which goes first rotates too, so none always follows another's work.
    for (let k = 0; k < sides.length; k++) {
      const [create, side] = sides[(i + k) % sides.length]!;
      side.push(await timed(() => create(`${prefix}-${i}`)));
    }
  }
  const sorted = (t: number[]) => (t.length === 0 ? undefined : t.sort((a, b) => a - b));
  return {
    measured: sorted(times.measured)!,
    peer: sorted(times.peer)!,
    admitted: sorted(times.admitted),
    floored: sorted(times.floored),
  };
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

const HEADER = `  ${"what".padEnd(40)}  p50 ms   p99 ms   max ms`;

function line(what: string, t: number[]): string {
  return `  ${what.padEnd(40)} ${percentile(t, 50).toFixed(2).padStart(7)} ${percentile(t, 99).toFixed(2).padStart(8)} ${t[t.length - 1]!.toFixed(2).padStart(8)}`;
}

function report(what: string, { measured, peer, admitted, floored }: Sides): void {
  const minus = (a: number[], b: number[], p: number) =>
    (percentile(a, p) - percentile(b, p)).toFixed(2);
  const interval = (a: number[], b: number[]) =>
    differenceInterval(a, b, 0.99).map(ms => ms.toFixed(2));
  console.log(`${what}\n${HEADER}`);
  console.log(line("Bulwark admission", measured));
  console.log(line(`peer: in ${PEER}, no webhook`, peer));
  if (admitted) console.log(line(`peer: as admitted, in ${PEER}`, admitted));
  if (floored) console.log(line("peer: floor webhook, same patch", floored));
  const [low, high] = interval(measured, peer);
  console.log(
    `  added by admission: p50 ${minus(measured, peer, 50)} ms, p99 ${minus(measured, peer, 99)} ms (95 % bootstrap interval ${low} to ${high}; target p99 ≤ 10 ms)`,
  );
  if (admitted) {
    console.log(
      `    storing the admitted (larger) object: p50 ${minus(admitted, peer, 50)} ms, p99 ${minus(admitted, peer, 99)} ms; the webhook calls: p50 ${minus(measured, admitted, 50)} ms, p99 ${minus(measured, admitted, 99)} ms`,
    );
  }
  if (floored) {
    const [floorLow, floorHigh] = interval(floored, peer);
    const [ownLow, ownHigh] = interval(measured, floored);
    console.log(
      `    added by the floor webhook (registered as Bulwark's, answering its patch, nothing else): p50 ${minus(floored, peer, 50)} ms, p99 ${minus(floored, peer, 99)} ms (interval ${floorLow} to ${floorHigh})`,
    );
    console.log(
      `    Bulwark beyond the floor: p50 ${minus(measured, floored, 50)} ms, p99 ${minus(measured, floored, 99)} ms (interval ${ownLow} to ${ownHigh})`,
    );
  }
}

/** One HTTPS request; resolves with the answer's text. */
function httpsText(url: string, options: RequestOptions, body?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(url, options, res => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", chunk => (text += chunk));
      res.on("end", () => resolve(text));
    });
    req.on("error", reject);
    req.end(body);
  });
}

const PROFILE_SECONDS = 20;

/** With --apiserver-profile: the API server's CPU over the next 20 s, saved as DIR/<what>.pprof. */
async function apiServerProfile(kc: KubeConfig, what: string): Promise<void> {
  const dir = values["apiserver-profile"];
  if (dir === undefined) return;
  const options: RequestOptions = { method: "GET", headers: {} };
  await kc.applyToHTTPSOptions(options as never);
  const url = `${kc.getCurrentCluster()!.server}/debug/pprof/profile?seconds=${PROFILE_SECONDS}`;
  const file = join(resolve(dir), `${what.replace(/[^A-Za-z0-9]+/g, "-").toLowerCase()}.pprof`);
  const profile = await new Promise<Buffer>((done, fail) => {
    const req = request(url, options, res => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => done(Buffer.concat(chunks)));
    });
    req.on("error", fail);
    req.end();
  });
  mkdirSync(resolve(dir), { recursive: true });
  writeFileSync(file, profile);
  console.log(`  API server CPU profile (${PROFILE_SECONDS} s): ${file}`);
}

/**
 * Sum and count of the API server's webhook call durations
 * (apiserver_admission_webhook_admission_duration_seconds), by webhook name and type.
 */
function webhookDurations(metrics: string): Map<string, { sum: number; count: number }> {
  const found = new Map<string, { sum: number; count: number }>();
  const pattern =
    /^apiserver_admission_webhook_admission_duration_seconds_(sum|count)\{([^}]*)\} (\S+)$/gm;
  for (const [, field, labels, value] of metrics.matchAll(pattern)) {
    const name = /name="([^"]*)"/.exec(labels!)?.[1] ?? "";
    const type = /type="([^"]*)"/.exec(labels!)?.[1] ?? "";
    const key = `${type} ${name}`;
    const entry = found.get(key) ?? { sum: 0, count: 0 };
    entry[field as "sum" | "count"] += Number(value);
    found.set(key, entry);
  }
  return found;
}

/** What the API server measured of its webhook calls between two /metrics readings. */
function printWebhookCalls(
  before: ReturnType<typeof webhookDurations>,
  after: ReturnType<typeof webhookDurations>,
  creates: number,
): void {
  for (const [key, { sum, count }] of after) {
    const calls = count - (before.get(key)?.count ?? 0);
    if (calls === 0) continue;
    const seconds = sum - (before.get(key)?.sum ?? 0);
    console.log(
      `  API server's webhook calls: ${key}: ${(calls / creates).toFixed(2)} per create, mean ${((seconds * 1000) / calls).toFixed(2)} ms`,
    );
  }
}

/** Processes whose CPU the paced runs report: a name, and how to find its PIDs now. */
type Busy = [name: string, pids: () => number[]][];

/**
 * Each process's CPU time since `before`, per round: what a create costs the whole system, which
 * moves far less from run to run than a p99 of latencies does.
 */
function cpuPerRound(busy: Busy, before: number[], rounds: number): string {
  return busy
    .map(([name, pids], i) => `${name} ${((cpuMs(pids()) - before[i]!) / rounds).toFixed(2)}`)
    .join(", ");
}

/** What is watched while the creates run: processes' CPU, and with --profile their profiles. */
interface Observed {
  busy: Busy;
  profilers: [process: string, InspectorProfiler][];
}

/** With --profile DIR: a profiler on each Pepr process's inspector, found in its log. */
async function peprProfilers(logDir: string): Promise<Observed["profilers"]> {
  if (values.profile === undefined) return [];
  mkdirSync(resolve(values.profile), { recursive: true });
  return Promise.all(
    (["admission", "watcher"] as const).map(
      async (name): Promise<Observed["profilers"][number]> => [
        name,
        await InspectorProfiler.connect(await inspectorUrl(join(logDir, `pepr-${name}.log`))),
      ],
    ),
  );
}

/** Runs `work` with every profiler on; each profile saved as DIR/<what>-<process>.cpuprofile. */
async function whileProfiled<T>(
  profilers: Observed["profilers"],
  what: string,
  work: () => Promise<T>,
): Promise<T> {
  await Promise.all(profilers.map(([, profiler]) => profiler.start()));
  const result = await work();
  const base = join(
    resolve(values.profile ?? "."),
    what.replace(/[^A-Za-z0-9]+/g, "-").toLowerCase(),
  );
  for (const [name, profiler] of profilers) {
    await profiler.stop(`${base}-${name}.cpuprofile`);
    console.log(`  ${name} CPU profile: ${base}-${name}.cpuprofile`);
  }
  return result;
}

async function measure(
  kc: KubeConfig,
  writer: KubeConfig,
  cert: TestCertificate,
  { busy, profilers }: Observed,
): Promise<void> {
  console.log(
    `\n${CREATES} sequential creates per kind in each namespace, alternating, ${STORED} Ingresses stored, writer ${values.writer ?? "tenant"} on client ${values.client ?? "kept-alive"}, Node ${process.version}, load average ${loadavg()
      .map(l => l.toFixed(2))
      .join(" ")}`,
  );
  const admittedPod = await admittedPodShape(kc.makeApiClient(CoreV1Api));
  for (const [k, write] of writes(writer, cert, admittedPod).entries()) {
    // The peer's creates call no webhook, so the API server's webhook figures are the measured's.
    const before = webhookDurations(await apiServerMetrics(kc));
    const profiled = apiServerProfile(kc, write.what);
    const cpuBefore = busy.map(([, pids]) => cpuMs(pids()));
    const sides = await whileProfiled(profilers, write.what, () => alternating(write, `s${k}`));
    const cpu = cpuPerRound(busy, cpuBefore, sides.measured.length);
    await profiled;
    const after = webhookDurations(await apiServerMetrics(kc));
    report(write.what, sides);
    printWebhookCalls(before, after, sides.measured.length);
    console.log(`  CPU per round of creates (every side once), ms: ${cpu}`);
  }
  if (RATE === undefined) return;
  console.log(`\nat ${RATE} creates/s for ${RATE_SECONDS} s (open loop)`);
  for (const [k, write] of writes(writer, cert, admittedPod).entries()) {
    const before = webhookDurations(await apiServerMetrics(kc));
    const cpuBefore = busy.map(([, pids]) => cpuMs(pids()));
    const wallBefore = performance.now();
    const measured = await paced(write, MEASURED, `rm${k}`, RATE);
    const wall = performance.now() - wallBefore;
    const cpu = busy.map(([name, pids], i) => {
      const share = (cpuMs(pids()) - cpuBefore[i]!) / wall;
      return `${name} ${(share * 100).toFixed(0)} %`;
    });
    const after = webhookDurations(await apiServerMetrics(kc));
    const peer = await paced(write, PEER, `rp${k}`, RATE);
    report(write.what, { measured: measured.times, peer: peer.times });
    printWebhookCalls(before, after, measured.times.length);
    console.log(`  CPU over the measured creates, in % of a core: ${cpu.join(", ")}`);
    const late = measured.lateStarts + peer.lateStarts;
    if (late > 0) console.log(`  (${late} creates started more than 5 ms late: the client lagged)`);
  }
  console.log(
    `load average after: ${loadavg()
      .map(l => l.toFixed(2))
      .join(" ")}`,
  );
}

/** One HTTPS POST of JSON on `agent`; resolves with the answer's text. */
function post(url: string, agent: Agent, body: string): Promise<string> {
  const headers = { "content-type": "application/json", "content-length": Buffer.byteLength(body) };
  return httpsText(url, { method: "POST", agent, headers }, body);
}

/** The kind and resource a review names (group "" is the core group). */
interface ReviewedType {
  group?: string;
  kind: string;
  resource: string;
}

/** The AdmissionReview the API server sends for creating `object` in the measured namespace. */
function createReview(
  { group = "", kind, resource }: ReviewedType,
  object: object,
  name: string,
): string {
  const gvk = { group, version: "v1", kind };
  const gvr = { group, version: "v1", resource };
  return JSON.stringify({
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: {
      uid: randomUUID(),
      kind: gvk,
      resource: gvr,
      requestKind: gvk,
      requestResource: gvr,
      name,
      namespace: MEASURED,
      operation: "CREATE",
      userInfo: { username: "admin", groups: ["system:masters"] },
      object,
      oldObject: null,
      dryRun: false,
      options: { apiVersion: "meta.k8s.io/v1", kind: "CreateOptions" },
    },
  });
}

/**
 * `CREATES` reviews posted one after the other on one kept-alive connection: the line of their
 * latencies, with the server process's CPU per review (from /proc, over the posts).
 */
async function directCalls(
  what: string,
  { url, ca, pid: serverPid }: { url: string; ca: string; pid: number },
  review: (name: string) => string,
): Promise<string> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1, ca });
  const times: number[] = [];
  const cpuBefore = cpuMs([serverPid]);
  try {
    for (let i = 0; i < CREATES; i++) {
      const body = review(`direct-${i}`);
      times.push(await timed(() => post(url, agent, body)));
    }
  } finally {
    agent.destroy();
  }
  const cpu = (cpuMs([serverPid]) - cpuBefore) / CREATES;
  return `${line(
    what,
    times.sort((a, b) => a - b),
  )} ${cpu.toFixed(2).padStart(8)}`;
}

/** The URL of the registered webhook whose name has `part`, in the mutating or validating configuration. */
async function webhookUrl(kc: KubeConfig, mutating: boolean, part: string): Promise<string> {
  const api = kc.makeApiClient(AdmissionregistrationV1Api);
  const configs = mutating
    ? await api.listMutatingWebhookConfiguration()
    : await api.listValidatingWebhookConfiguration();
  const hooks: { name: string; clientConfig: { url?: string } }[] = configs.items.flatMap(
    c => c.webhooks ?? [],
  );
  const url = hooks.find(w => w.name.includes(part))?.clientConfig.url;
  if (url === undefined) throw new Error(`no webhook named *${part}* with a URL is registered`);
  return url;
}

/**
 * Where a webhook call's time goes, without the API server: each review Bulwark's creates cause
 * (the Ingress's, the TLS Secret's; the annotated Pod's mutation, its only call) posted straight to Pepr's
 * admission server, against the floor: the floor webhook's server (admission-floor.ts, a process
 * of its own, same Node), whose /validate only parses the review and allows it.
 */
async function measureDirect(
  cp: ControlPlane,
  kc: KubeConfig,
  cert: TestCertificate,
  { floor, peprPid }: { floor: FloorWebhook; peprPid: number },
): Promise<void> {
  const caPem = cp.pki.caPem;
  const reviews: [string, string, (name: string) => string][] = [
    [
      "Ingress, validate",
      await webhookUrl(kc, false, "ingresses"),
      name =>
        createReview(
          { group: "networking.k8s.io", kind: "Ingress", resource: "ingresses" },
          ingress(name),
          name,
        ),
    ],
    [
      "TLS Secret, validate",
      await webhookUrl(kc, false, "tls-secrets"),
      name =>
        createReview(
          { kind: "Secret", resource: "secrets" },
          tlsSecret(MEASURED, name, cert),
          name,
        ),
    ],
    [
      "annotated Pod, mutate",
      await webhookUrl(kc, true, "-pods."),
      name => createReview({ kind: "Pod", resource: "pods" }, pod(name, true), name),
    ],
    [
      "annotated Pod, mutate, as sent",
      await webhookUrl(kc, true, "-pods."),
      apiServersReview(floor.reviewFile),
    ],
  ];
  console.log(
    `Reviews posted straight to the webhook server (no API server), ${CREATES} sequential each, one kept-alive connection; the server's CPU per review`,
  );
  console.log(`${HEADER}   CPU ms`);
  for (const [what, url, review] of reviews) {
    const server = { url, ca: caPem, pid: peprPid };
    console.log(await directCalls(`Pepr admission: ${what}`, server, review));
  }
  // The floor webhook's server: on /validate it only allows.
  const server = { url: `${floor.origin}/validate`, ca: caPem, pid: floor.pid };
  const [podReview, sentReview] = [reviews[2]![2], reviews[3]![2]];
  console.log(await directCalls("peer: allow only", server, podReview));
  console.log(await directCalls("peer: allow only, as sent", server, sentReview));
}

const FLOORED = { "bench-floor": "true" };

/**
 * The floor webhook: Bulwark's pod webhook registered again under another name, as it is (rules,
 * matchConditions, timeout, reinvocation), but for pods labelled `FLOORED` in the peer namespace
 * and pointed at admission-floor.ts, which answers every review with the patch Bulwark answered
 * for the measured pod. The API server's work on the call (sending the pod, applying the patch,
 * decoding it again) is the same as for Bulwark's; what differs is Bulwark's own work. Resolves
 * once a pod created there comes back patched.
 */
async function startFloorWebhook(
  cp: ControlPlane,
  kc: KubeConfig,
  dir: string,
): Promise<FloorWebhook> {
  const url = await webhookUrl(kc, true, "-pods.");
  const agent = new Agent({ keepAlive: false, ca: cp.pki.caPem });
  const review = createReview({ kind: "Pod", resource: "pods" }, pod("shape", true), "shape");
  const answer = JSON.parse(await post(url, agent, review)) as { response: { patch?: string } };
  if (answer.response.patch === undefined) throw new Error(`${url} returned no patch for a pod`);
  const patchFile = join(dir, "floor-patch.json");
  const reviewFile = join(dir, "floor-review.json");
  writeFileSync(patchFile, Buffer.from(answer.response.patch, "base64"));
  const issued = issueLoopbackServingCertificate(cp.pki, "bench-floor-webhook");
  const floor = await startListeningChild([
    join(__dirname, "admission-floor.ts"),
    issued.keyPath,
    issued.certPath,
    patchFile,
    reviewFile,
  ]);
  const origin = `https://127.0.0.1:${floor.port}`;
  const api = kc.makeApiClient(AdmissionregistrationV1Api);
  const bulwarks = await api.listMutatingWebhookConfiguration();
  const hook = bulwarks.items.flatMap(c => c.webhooks ?? []).find(w => w.clientConfig.url === url)!;
  await api.createMutatingWebhookConfiguration({
    body: {
      metadata: { name: "bench-floor" },
      webhooks: [
        {
          ...hook,
          name: "bench-floor.bulwark.dev",
          clientConfig: {
            url: `${origin}/mutate`,
            caBundle: Buffer.from(cp.pki.caPem).toString("base64"),
          },
          namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": PEER } },
          objectSelector: { matchLabels: FLOORED },
        },
      ],
    },
  });
  const core = kc.makeApiClient(CoreV1Api);
  for (let i = 0; ; i++) {
    const name = `floor-probe-${i}`;
    const created = await core.createNamespacedPod({
      namespace: PEER,
      body: pod(name, true, FLOORED),
    });
    if ((created.spec?.initContainers ?? []).length > 0) break;
    if (i === 100) throw new Error("the floor webhook did not patch a pod within 10 s");
    await sleep(100);
  }
  return { stop: () => stopChild(floor.child), pid: floor.child.pid!, origin, reviewFile };
}

interface FloorWebhook {
  stop(): Promise<void>;
  /** Its server's process, and where it listens (https://127.0.0.1:PORT). */
  pid: number;
  origin: string;
  /** The first review the API server sent the floor webhook (a pod of the peer namespace). */
  reviewFile: string;
}

/**
 * `reviewFile`'s review as if for a pod named `name` in the measured namespace: the review the API
 * server sends for the measured pods, with its defaulted fields and managedFields.
 */
function apiServersReview(reviewFile: string): (name: string) => string {
  const sent = JSON.parse(readFileSync(reviewFile, "utf8")) as {
    request: { uid: string; name: string; namespace: string; object: V1Pod };
  };
  return name => {
    const { request: r } = sent;
    const metadata = { ...r.object.metadata, name, namespace: MEASURED, labels: undefined };
    const request = { ...r, uid: randomUUID(), name, namespace: MEASURED };
    return JSON.stringify({ ...sent, request: { ...request, object: { ...r.object, metadata } } });
  };
}

/**
 * The read an Ingress review makes, both ways: a Secret from etcd (no resourceVersion: a quorum
 * read) and from the API server's watch cache (resourceVersion=0), interleaved, on one kept-alive
 * client (kube/kept-alive-api.ts, as admission reads).
 */
async function measureSecretReads(kc: KubeConfig): Promise<void> {
  const api = new KeptAliveApi(kc);
  const path = `/api/v1/namespaces/${MEASURED}/secrets/wildcard`;
  const etcd: number[] = [];
  const cache: number[] = [];
  for (let i = 0; i < CREATES; i++) {
    const ways: [string, number[]][] = [
      [path, etcd],
      [`${path}?resourceVersion=0`, cache],
    ];
    if (i % 2 === 1) ways.reverse();
    for (const [url, times] of ways) times.push(await timed(() => api.get(url)));
  }
  console.log(`A TLS Secret read by admission, ${CREATES} each way, interleaved`);
  console.log(HEADER);
  console.log(
    line(
      "from the API server's cache",
      cache.sort((a, b) => a - b),
    ),
  );
  console.log(
    line(
      "peer: from etcd (quorum read)",
      etcd.sort((a, b) => a - b),
    ),
  );
}

const WRITER = "bench-writer";

/** The writes' credentials: with --writer tenant, a user that RBAC lets create what is measured. */
async function writerKubeConfig(cp: ControlPlane, admin: KubeConfig): Promise<KubeConfig> {
  if (values.writer === "admin") return admin;
  const cert = issueCertificate(cp.pki, { name: WRITER, commonName: WRITER, usage: "clientAuth" });
  const rbac = "rbac.authorization.k8s.io";
  const objects: object[] = [
    {
      apiVersion: `${rbac}/v1`,
      kind: "ClusterRole",
      metadata: { name: WRITER },
      rules: [
        { apiGroups: [""], resources: ["pods", "secrets"], verbs: ["create"] },
        { apiGroups: ["networking.k8s.io"], resources: ["ingresses"], verbs: ["create"] },
      ],
    },
    {
      apiVersion: `${rbac}/v1`,
      kind: "ClusterRoleBinding",
      metadata: { name: WRITER },
      roleRef: { apiGroup: rbac, kind: "ClusterRole", name: WRITER },
      subjects: [{ apiGroup: rbac, kind: "User", name: WRITER }],
    },
  ];
  await applyOrThrow(admin, objects as KubernetesObject[]);
  const writer = new KubeConfig();
  writer.loadFromString(kubeconfigFor(cp.server, cp.pki, cert));
  return writer;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "bulwark-bench-"));
  // Asked-for flags (--trace-gc) print into the processes' logs: those are kept.
  let keepLogs = false;
  let floor: FloorWebhook | undefined;
  try {
    const binDir = ensureBinaries();
    buildModule({ quiet: true });
    const profiling = values["apiserver-profile"] !== undefined;
    const cp = await startControlPlane({ dir, binDir, profiling });
    await installCrds(cp.kubeconfigPath);
    const nodeFlags = [
      ...(values.profile === undefined ? [] : ["--inspect=127.0.0.1:0"]),
      ...(values["pepr-flags"]?.split(" ").filter(Boolean) ?? []),
    ];
    const logLevel = values["log-level"] as "debug" | "info" | "warn" | "error" | undefined;
    const pepr = await startPeprModule(cp, { root: ROOT, nodeFlags, logLevel });
    const busy: Busy = [
      ["Pepr admission", () => [pepr.process.pid]],
      // The watcher restarts under a new PID if it dies: read it each time.
      ["Pepr watcher", () => [Number(readFileSync(pepr.watcherPidFile, "utf8"))]],
      ...cp.processes.map((p): Busy[number] => [p.name, () => withChildren(p.pid)]),
      ["this client", () => [process.pid]],
    ];
    keepLogs = values["pepr-flags"] !== undefined;
    if (keepLogs || logLevel !== undefined) {
      console.log(
        `Pepr processes: node ${nodeFlags.join(" ")}, LOG_LEVEL ${logLevel ?? "info"}${keepLogs ? `; their logs, kept: ${join(dir, "logs")}` : ""}`,
      );
    }
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
    floor = await startFloorWebhook(cp, kc, dir);
    busy.splice(2, 0, ["floor webhook", () => [floor!.pid]]);
    const profilers = await peprProfilers(join(dir, "logs"));
    try {
      await measure(kc, await writerKubeConfig(cp, kc), cert, { busy, profilers });
    } finally {
      for (const [, profiler] of profilers) profiler.close();
    }
    await measureDirect(cp, kc, cert, {
      floor,
      peprPid: pepr.process.pid!,
    });
    await measureSecretReads(kc);
  } finally {
    await floor?.stop();
    await stopEverything();
    if (!keepLogs) rmSync(dir, { recursive: true, force: true });
  }
}

main().catch(error => {
  console.error(error);
  process.exitCode = 1;
});
