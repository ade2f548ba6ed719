// Edge health at zone scale: 200 daemons on loopback, one address each (127.a.b.c on Linux lo),
// every one a real EdgeDaemon with its own express server, probes and signed result PUTs over
// real sockets; only the Kubernetes side is simulated (an in-memory Node annotation store kept by
// this process), as 200 API-server watches would measure the API server, not the daemon.
// The daemons run in `--workers` child processes (default: one per core), a share each, so that
// one event loop is not the bottleneck. "CPU per daemon" = the workers' CPU time / daemons / wall
// time over whole check periods in the steady state (HTTP server and client, HMAC, JSON, probes,
// tallies). Decision latency: a daemon is killed (timers stopped, server and connections closed)
// and the time until its writer writes "false" is taken, in check periods, for several victims.
// Targets (../shared/DESIGN.md): decision within 2 check periods; ≤ 5 % of a core per daemon.
//
//   npx tsx hack/bench/edge-health.ts [--nodes 200] [--period 10] [--probes 16] [--measure 3]
//                                      [--kills 3] [--workers 2]
import { fork, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { Agent, type Server } from "node:http";
import { cpus, loadavg } from "node:os";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { makeProber } from "../../edge-health-daemon/checks";
import type { VoteTerm } from "../../core/edge";
import { EdgeDaemon, type DaemonLog, type VoteOnRecord } from "../../edge-health-daemon/daemon";
import type { Member } from "../../edge-health-daemon/membership";
import { closeServer, listen, makeApp } from "../../edge-health-daemon/server";
import type { Decision } from "../../edge-health-daemon/tally";
import { makeSender } from "../../edge-health-daemon/transport";

const { values } = parseArgs({
  options: {
    nodes: { type: "string" },
    period: { type: "string" },
    probes: { type: "string" },
    measure: { type: "string" },
    kills: { type: "string" },
    workers: { type: "string" },
    worker: { type: "string" },
  },
});
const NODES = Number(values.nodes ?? 200);
const PERIOD_MS = Number(values.period ?? 10) * 1000;
const PROBES = Number(values.probes ?? 16);
const MEASURE_PERIODS = Number(values.measure ?? 3);
const KILLS = Number(values.kills ?? 3);
const WORKERS = Number(values.workers ?? cpus().length);
const PORT = 51005;

const quiet: DaemonLog = { info: () => {}, warn: () => {}, debug: () => {} };
const sleep = (ms: number): Promise<void> => new Promise(r => setTimeout(r, ms));

/** Parent → worker. */
type Command =
  | { op: "start"; members: Member[]; mine: string[]; key: string }
  | { op: "go" }
  | { op: "record"; node: string; value: Decision; term: VoteTerm }
  | { op: "measure"; ms: number }
  | { op: "kill"; node: string }
  | { op: "stop" };

/** Worker → parent. */
type Report =
  | { op: "started" }
  | { op: "write"; node: string; value: Decision; term: VoteTerm; by: string }
  | { op: "measured"; cpuUs: number; wallUs: number; lagP99Ms: number; rejected: number }
  | { op: "killed"; node: string; at: number };

interface Sim {
  daemon: EdgeDaemon;
  server: Server;
  timer?: NodeJS.Timeout;
  agent: Agent;
}

// ---------------------------------------------------------------------------------------------
// Worker: hosts its share of the daemons.

function send(report: Report): void {
  process.send?.(report);
}

async function startSim(
  member: Member,
  members: Member[],
  shared: { key: Buffer; record: Map<string, VoteOnRecord> },
): Promise<Sim> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const timeoutMs = Math.min(2000, PERIOD_MS * 0.4);
  const prober = makeProber(
    [
      {
        kind: "daemon",
        weight: 1,
        timeoutMs,
        retries: 0,
        port: PORT,
        scheme: "http",
      },
    ],
    () => member.ip,
    agent,
  );
  const sender = makeSender({
    port: PORT,
    timeoutMs: Math.min(2000, PERIOD_MS),
    localAddress: () => member.ip,
    agent,
  });
  const daemon = new EdgeDaemon(
    {
      self: member.name,
      keys: [shared.key],
      hmacOverlapMs: 300_000,
      maxClockSkewMs: 10_000,
      checkPeriodMs: PERIOD_MS,
      scoreLine: 100,
      voteTimeoutMs: 3 * PERIOD_MS,
      messageMaxAgeMs: 30_000,
      maxProbePeers: PROBES,
      writerFallbackPeriods: 3,
      voteTermPeriods: 3,
      verifySource: true,
    },
    {
      now: Date.now,
      members: () => members,
      onRecord: node => shared.record.get(node) ?? {},
      write: async (node, value, term) => {
        shared.record.set(node, { value, term });
        send({ op: "write", node, value, term, by: member.name });
      },
      probe: ip => prober.probe(ip),
      send: (to, message) => sender.send(to, message),
      log: quiet,
    },
  );
  const server = await listen(makeApp(daemon), member.ip, PORT);
  return { daemon, server, agent };
}

/** Starts the rounds once every server listens (a rollout's "not yet up" is not measured here). */
function go(sim: Sim): void {
  // DaemonSet pods start at different moments: spread the rounds over the period.
  const round = (): void => void sim.daemon.checkRound();
  setTimeout(() => {
    round();
    sim.timer = setInterval(round, PERIOD_MS);
  }, Math.random() * PERIOD_MS);
}

async function stopSim(sim: Sim): Promise<void> {
  if (sim.timer) clearInterval(sim.timer);
  sim.daemon.stop();
  if (sim.server.listening) await closeServer(sim.server);
  sim.agent.destroy();
}

async function measure(sims: Map<string, Sim>, ms: number): Promise<Report> {
  const lag = monitorEventLoopDelay({ resolution: 10 });
  lag.enable();
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  await sleep(ms);
  const cpu = process.cpuUsage(cpu0);
  lag.disable();
  let rejected = 0;
  for (const sim of sims.values()) {
    for (const n of Object.values(sim.daemon.stats.rejected)) rejected += n;
  }
  return {
    op: "measured",
    cpuUs: cpu.user + cpu.system,
    wallUs: Number(process.hrtime.bigint() - t0) / 1000,
    lagP99Ms: lag.percentile(99) / 1e6,
    rejected,
  };
}

function runWorker(): void {
  const sims = new Map<string, Sim>();
  const record = new Map<string, VoteOnRecord>();
  const handle = async (command: Command): Promise<void> => {
    switch (command.op) {
      case "start": {
        const key = Buffer.from(command.key, "hex");
        for (const name of command.mine) {
          const member = command.members.find(m => m.name === name);
          if (member) sims.set(name, await startSim(member, command.members, { key, record }));
        }
        return send({ op: "started" });
      }
      case "go":
        for (const sim of sims.values()) go(sim);
        return;
      case "record":
        record.set(command.node, { value: command.value, term: command.term });
        return;
      case "measure":
        return send(await measure(sims, command.ms));
      case "kill": {
        const sim = sims.get(command.node);
        if (!sim) return;
        const at = Date.now();
        await stopSim(sim);
        return send({ op: "killed", node: command.node, at });
      }
      case "stop":
        for (const sim of sims.values()) await stopSim(sim);
        process.exit(0);
    }
  };
  process.on("message", (command: Command) => void handle(command));
}

// ---------------------------------------------------------------------------------------------
// Parent: the simulated API server, the clock, the table.

interface Worker {
  child: ChildProcess;
  mine: string[];
}

class Coordinator {
  readonly record = new Map<string, Decision>();
  /** Writes that changed a node's value; `refreshes` counts the others (a new term only). */
  readonly writes: { node: string; value: Decision; at: number; by: string }[] = [];
  refreshes = 0;
  readonly #waiters: ((r: Report) => void)[] = [];

  constructor(readonly workers: Worker[]) {
    for (const w of workers) w.child.on("message", (r: Report) => this.#onReport(r));
  }

  #onReport(r: Report): void {
    if (r.op === "write") {
      if (this.record.get(r.node) === r.value) this.refreshes++;
      else this.writes.push({ node: r.node, value: r.value, at: Date.now(), by: r.by });
      this.record.set(r.node, r.value);
      const { node, value, term } = r;
      for (const w of this.workers) w.child.send({ op: "record", node, value, term });
      return;
    }
    for (const waiter of this.#waiters.splice(0)) waiter(r);
  }

  /** The next `count` reports of kind `op`. */
  collect<K extends Report["op"]>(op: K, count: number): Promise<Extract<Report, { op: K }>[]> {
    const got: Extract<Report, { op: K }>[] = [];
    return new Promise(resolve => {
      const wait = (r: Report): void => {
        if (r.op === op) got.push(r as Extract<Report, { op: K }>);
        if (got.length >= count) resolve(got);
        else this.#waiters.push(wait);
      };
      this.#waiters.push(wait);
    });
  }

  voted(value: Decision): number {
    return [...this.record.values()].filter(v => v === value).length;
  }
}

async function untilAllTrue(c: Coordinator): Promise<void> {
  const started = Date.now();
  let lastLog = started;
  while (c.voted("true") < NODES) {
    await sleep(100);
    if (Date.now() - lastLog > PERIOD_MS) {
      lastLog = Date.now();
      console.log(`  ${c.voted("true")}/${NODES} voted "true" so far`);
    }
  }
  const periods = (Date.now() - started) / PERIOD_MS;
  console.log(`all ${NODES} voted "true" ${periods.toFixed(2)} periods after start`);
}

/** Kills one daemon; how many periods until its node is written "false", and how many writes. */
async function killAndTime(
  c: Coordinator,
  victim: string,
): Promise<{ periods: number; writes: number }> {
  const owner = c.workers.find(w => w.mine.includes(victim));
  const killed = c.collect("killed", 1);
  owner?.child.send({ op: "kill", node: victim });
  const [{ at: killedAt } = { at: Date.now() }] = await killed;
  const found = () =>
    c.writes.find(w => w.node === victim && w.value === "false" && w.at >= killedAt);
  while (!found() && Date.now() - killedAt < 5 * PERIOD_MS) await sleep(20);
  const w = found();
  const periods = w ? (w.at - killedAt) / PERIOD_MS : Number.POSITIVE_INFINITY;
  const took = w ? `${(w.at - killedAt) / 1000}s = ${periods.toFixed(2)} periods` : "never";
  console.log(`killed ${victim}: voted "false" after ${took}${w ? ` by ${w.by}` : ""}`);
  // Writes of "false" on the victim until one period after the first: more than 1 = several writers.
  const until = (w?.at ?? killedAt) + PERIOD_MS;
  await sleep(Math.max(0, until - Date.now()));
  const writes = c.writes.filter(
    x => x.node === victim && x.value === "false" && x.at >= killedAt && x.at <= until,
  ).length;
  return { periods, writes };
}

async function runParent(): Promise<void> {
  const second = 100 + ((randomBytes(1)[0] ?? 0) % 100);
  const members: Member[] = Array.from({ length: NODES }, (_, i) => ({
    name: `edge-${String(i).padStart(3, "0")}`,
    ip: `127.${second}.${Math.floor(i / 250)}.${(i % 250) + 1}`,
  }));
  const key = randomBytes(32).toString("hex");
  const workers: Worker[] = Array.from({ length: WORKERS }, (_, w) => ({
    child: fork(__filename, [...process.argv.slice(2), "--worker", String(w)]),
    mine: members.filter((_, i) => i % WORKERS === w).map(m => m.name),
  }));
  const c = new Coordinator(workers);
  console.log(
    `${NODES} daemons in ${WORKERS} processes on 127.${second}.x.y:${PORT}, period ${PERIOD_MS / 1000}s, ${PROBES} probes per node`,
  );
  // Other work on the machine competes for the same cores and stretches every number here.
  const load = loadavg()
    .map(l => l.toFixed(2))
    .join(" ");
  console.log(`machine: ${cpus().length} cores, load average ${load}`);
  const started = c.collect("started", WORKERS);
  for (const w of workers) w.child.send({ op: "start", members, mine: w.mine, key });
  await started;
  for (const w of workers) w.child.send({ op: "go" });
  await untilAllTrue(c);
  await sleep(PERIOD_MS); // settle

  const refreshesBefore = c.refreshes;
  const measuring = c.collect("measured", WORKERS);
  for (const w of workers) w.child.send({ op: "measure", ms: MEASURE_PERIODS * PERIOD_MS });
  const measured = await measuring;
  const cores = measured.reduce((sum, m) => sum + m.cpuUs / m.wallUs, 0);
  const perDaemon = (cores / NODES) * 100;
  const lagP99 = Math.max(...measured.map(m => m.lagP99Ms));
  const rejected = measured.reduce((sum, m) => sum + m.rejected, 0);
  const refreshRate = (c.refreshes - refreshesBefore) / NODES / MEASURE_PERIODS;

  const flapsBefore = c.writes.filter(w => w.value === "false").length;
  const latencies: number[] = [];
  let falseWrites = 0;
  for (let i = 0; i < KILLS; i++) {
    const victim = members[Math.floor(((i + 0.5) * NODES) / KILLS)];
    if (!victim) continue;
    const { periods, writes } = await killAndTime(c, victim.name);
    latencies.push(periods);
    falseWrites += writes;
  }
  const worst = Math.max(...latencies);
  const row = (...cells: string[]): void => console.log(`| ${cells.join(" | ")} |`);
  console.log("");
  row("what", "measured", "target");
  row("---", "---", "---");
  row(`CPU, all ${NODES} daemons`, `${cores.toFixed(3)} cores over ${MEASURE_PERIODS} periods`, "");
  row(
    "CPU per daemon",
    `${perDaemon.toFixed(3)} % of a core`,
    `≤ 5 % (ratio ${(perDaemon / 5).toFixed(3)})`,
  );
  row(
    `decision latency (${latencies.length} kills), worst`,
    `${worst.toFixed(2)} periods`,
    `≤ 2 (ratio ${(worst / 2).toFixed(2)})`,
  );
  row(`event-loop delay p99 (worst of ${WORKERS} processes)`, `${lagP99.toFixed(1)} ms`, "");
  row(
    `"false" writes per killed node`,
    (falseWrites / Math.max(1, latencies.length)).toFixed(2),
    "1 (single writer)",
  );
  row("vote term refreshes per node per period", refreshRate.toFixed(2), "about 1 (the writer)");
  row("rejected messages", String(rejected), "0");
  row(`healthy nodes written "false" before the kills (starved probes)`, String(flapsBefore), "0");
  for (const w of workers) w.child.send({ op: "stop" });
}

if (values.worker !== undefined) runWorker();
else void runParent();
