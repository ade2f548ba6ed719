// Child processes of the local control plane and the test harness.
// Each child runs under `setpriv --pdeathsig`, so the kernel kills it if the Node process that
// started it dies, even by SIGKILL: no orphaned etcd or kube-apiserver outlives a test run.
import { spawn, type ChildProcess } from "node:child_process";
import { createWriteStream, existsSync } from "node:fs";
import { once } from "node:events";

export interface ManagedProcess {
  readonly name: string;
  readonly pid: number;
  readonly logFile: string;
  /** Resolves with the exit code (or signal name) once the process has gone. */
  readonly exited: Promise<number | string>;
  /** SIGTERM, then SIGKILL after `graceMs`. Safe to call twice. */
  stop(graceMs?: number): Promise<void>;
}

export interface StartOptions {
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  logFile: string;
}

const SETPRIV = "/usr/bin/setpriv";

// Every process started here and not yet exited, in start order: a signal handler can stop them
// all even when it arrives half-way through start-up.
const live = new Set<ManagedProcess>();

export function startProcess(
  name: string,
  command: string,
  args: string[],
  options: StartOptions,
): ManagedProcess {
  const log = createWriteStream(options.logFile, { flags: "a" });
  const [file, argv] = existsSync(SETPRIV)
    ? [SETPRIV, ["--pdeathsig", "SIGKILL", "--", command, ...args]]
    : [command, args];
  const child: ChildProcess = spawn(file, argv, {
    cwd: options.cwd,
    env: options.env ?? process.env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout?.pipe(log, { end: false });
  child.stderr?.pipe(log, { end: false });
  if (child.pid === undefined) throw new Error(`${name}: could not start ${command}`);

  const exited = once(child, "exit").then(([code, signal]) => {
    log.end();
    return (code as number | null) ?? (signal as string | null) ?? "unknown";
  });
  let stopping: Promise<void> | undefined;
  const managed: ManagedProcess = {
    name,
    pid: child.pid,
    logFile: options.logFile,
    exited,
    stop(graceMs = 5000) {
      stopping ??= (async () => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        child.kill("SIGTERM");
        const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
        await exited;
        clearTimeout(timer);
      })();
      return stopping;
    },
  };
  live.add(managed);
  void exited.then(() => live.delete(managed));
  return managed;
}

/** Told when stopEverything begins, so a supervisor does not restart what it stops. */
const onStopEverything = new Set<() => void>();

/** Calls `hook` when stopEverything begins; the returned function unregisters it. */
export function beforeStopEverything(hook: () => void): () => void {
  onStopEverything.add(hook);
  return () => onStopEverything.delete(hook);
}

/** Stops every process this Node process started that is still running. */
export function stopEverything(graceMs?: number): Promise<void> {
  for (const hook of [...onStopEverything]) hook();
  onStopEverything.clear();
  return stopAll([...live], graceMs);
}

/** Stops processes in reverse start order: consumers before what they depend on. */
export async function stopAll(processes: ManagedProcess[], graceMs?: number): Promise<void> {
  for (const p of [...processes].reverse()) await p.stop(graceMs);
}
