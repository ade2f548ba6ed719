// The one wait of the tests (and of the harness and hack/ scripts that start things): poll a
// condition until it holds, and fail with what was awaited when it does not in time. It keeps
// real time while a test mocks timers (mock.timers): the timer and the clock it uses are taken
// before any test can replace them.
import { describeError } from "../../kube/api-errors";

const realSetTimeout = globalThis.setTimeout;
const monotonicMs = performance.now.bind(performance);
const FIRST_INTERVAL_MS = 10;

/**
 * Calls `probe` until it gives a value other than undefined or false, and returns that value. A
 * probe that throws counts as not yet (the last error is in the failure). The probe runs after
 * 10 ms at first, the wait doubling up to `intervalMs`, so a quick condition is seen quickly and
 * a slow one is not polled hard.
 *
 * @param what the awaited condition, for the failure: "timed out after 30000 ms waiting for <what>"
 */
export async function waitUntil<T>(
  what: string,
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 30_000,
  intervalMs = 200,
): Promise<T> {
  const deadline = monotonicMs() + timeoutMs;
  let waitMs = Math.min(FIRST_INTERVAL_MS, intervalMs);
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
      lastError = undefined;
    } catch (error) {
      lastError = error;
    }
    if (monotonicMs() >= deadline) break;
    await new Promise(resolve => realSetTimeout(resolve, waitMs));
    waitMs = Math.min(waitMs * 2, intervalMs);
  }
  const cause =
    lastError === undefined ? "" : `; the last check failed: ${describeError(lastError)}`;
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${cause}`);
}
