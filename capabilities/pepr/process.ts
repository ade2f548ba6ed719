// Facts about the Pepr process that every capability asks.

/** Whether this process runs Pepr's watch half (the watcher Deployment, or dev mode's single process). */
export function isWatcherProcess(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.PEPR_WATCH_MODE === "true" || env.PEPR_MODE === "dev";
}
