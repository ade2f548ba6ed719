// What each workload's local-stack entry (hack/local-stack/<workload>.ts) takes and returns, so
// `npm start` can run them as local processes beside the control plane and the Pepr module.
import type { ManagedProcess } from "../control-plane/processes";

export interface LocalWorkloadContext {
  kubeconfigPath: string;
  /** A folder of its own for state and logs. */
  dir: string;
  log: (message: string) => void;
  /** Extra environment for the workload's processes (ports, settings). */
  env: NodeJS.ProcessEnv;
}

export interface LocalWorkload {
  stop(): Promise<void>;
  /** What `npm start` prints about it: addresses, ports, where its logs are. */
  lines: string[];
  /** Its processes: `npm start` stops the stack when one exits unexpectedly. */
  processes: ManagedProcess[];
}
