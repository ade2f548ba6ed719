// What every workload entrypoint (gateway, permission server, init, edge-health daemon) does with
// its process: find its API server, wait for the stop signal, turn main's result into an exit code.
import { KubeConfig } from "@kubernetes/client-node";

/** From a kubeconfig file (local runs, tests), or the pod's service account when there is none. */
export function workloadKubeConfig(path: string | undefined): KubeConfig {
  const kc = new KubeConfig();
  if (path) kc.loadFromFile(path);
  else kc.loadFromCluster();
  return kc;
}

/** Resolves with the first of SIGTERM (kubelet) or SIGINT (a terminal). */
export function untilStopSignal(): Promise<string> {
  return new Promise(resolve => {
    for (const signal of ["SIGTERM", "SIGINT"] as const)
      process.once(signal, () => resolve(signal));
  });
}

/**
 * Runs main and exits with its code; an unexpected error exits 1 with one line naming the
 * workload, because kubelet shows the container's last line as its termination message.
 */
export function runWorkload(name: string, main: (argv: string[]) => Promise<number>): void {
  main(process.argv.slice(2)).then(
    code => process.exit(code),
    error => {
      const message = error instanceof Error ? error.message : String(error);
      process.stderr.write(`${name}: ${oneLine(message)}\n`);
      if (error instanceof Error && error.stack && process.env.LOG_LEVEL === "debug")
        process.stderr.write(`${error.stack}\n`);
      process.exit(1);
    },
  );
}

/** `text`'s lines, trimmed, joined by single spaces (split, as a whitespace-around-newline expression is quadratic). */
function oneLine(text: string): string {
  return text
    .split("\n")
    .map(line => line.trim())
    .filter(line => line !== "")
    .join(" ");
}
