// Go-style durations for settings ("500ms", "2m", "1h30m", "90s"), as operators write them for
// Kubernetes components. A bare number is seconds.

const UNITS_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
const PART = /(\d+(?:\.\d+)?)(ms|s|m|h)/g;
const WHOLE = /^(?:\d+(?:\.\d+)?(?:ms|s|m|h))+$/;

/** Milliseconds of a duration such as `2m` or `1h30m` (or seconds as a bare number); undefined when invalid. */
export function parseDurationMs(text: string): number | undefined {
  const value = text.trim();
  if (/^\d+(?:\.\d+)?$/.test(value)) return Number(value) * 1000;
  if (!WHOLE.test(value)) return undefined;
  let total = 0;
  for (const match of value.matchAll(PART)) {
    total += Number(match[1]) * (UNITS_MS[match[2] ?? ""] ?? 0);
  }
  return total;
}

/** `2m`, `1h`, `1.5s`, `250ms`: the shortest readable form, for messages. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${Number((ms / 1000).toFixed(1))}s`;
  if (ms < 3_600_000) return `${Number((ms / 60_000).toFixed(1))}m`;
  return `${Number((ms / 3_600_000).toFixed(2))}h`;
}
