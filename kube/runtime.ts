// Facts about the Pepr process and the API server's answers that every capability asks.

/** Whether this process runs Pepr's watch half (the watcher Deployment, or dev mode's single process). */
export function isWatcherProcess(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.PEPR_WATCH_MODE === "true" || env.PEPR_MODE === "dev";
}

/** Whether a Kubernetes client error is a 404 (KFC reports the HTTP status as `status`). */
export function isNotFound(error: unknown): boolean {
  return (
    typeof error === "object" && error !== null && (error as { status?: number }).status === 404
  );
}
