// Figures of a benchmark's runs: quantiles, medians, spreads, the machine's load.
import { seededRandom } from "../../test/harness/generate";
import { loadavg } from "node:os";

/** The q-quantile (0..1) of ascending `sorted`, nearest rank. */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil(q * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

/** "0.71 1.02 1.50": the 1, 5 and 15 minute load averages now. */
export function loadAverages(): string {
  return loadavg()
    .map(l => l.toFixed(2))
    .join(" ");
}

/** The element with the median of `key` (lower middle for an even count). */
export function medianBy<T>(items: readonly T[], key: (item: T) => number): T {
  const sorted = [...items].sort((a, b) => key(a) - key(b));
  return sorted[Math.floor((sorted.length - 1) / 2)]!;
}

/** "min–max" of `key` over the runs, for the spread next to the median. */
export function spread<T>(items: readonly T[], key: (item: T) => number, digits = 0): string {
  const values = items.map(key);
  return `${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)}`;
}

function resampled(sample: readonly number[], random: () => number): number[] {
  const drawn = Array.from(sample, () => sample[Math.floor(random() * sample.length)]!);
  return drawn.sort((x, y) => x - y);
}

/**
 * How far quantile(a, q) − quantile(b, q) moves from sampling alone: both samples resampled with
 * replacement `rounds` times (percentile bootstrap), the middle `level` of the differences. A
 * difference of two p99s of 1 000 creates each rests on their 10 slowest: this says how loosely.
 */
export function differenceInterval(
  a: readonly number[],
  b: readonly number[],
  q: number,
  options: { rounds?: number; level?: number; random?: () => number } = {},
): [number, number] {
  const { rounds = 1_000, level = 0.95, random = seededRandom(1) } = options;
  const differences = Array.from(
    { length: rounds },
    () => quantile(resampled(a, random), q) - quantile(resampled(b, random), q),
  ).sort((x, y) => x - y);
  const tail = (1 - level) / 2;
  return [quantile(differences, tail), quantile(differences, 1 - tail)];
}

/** The fastest of `rounds` timings of `run`, in ms: the figure least moved by the machine's load. */
export function bestOf(rounds: number, run: () => unknown): number {
  let fastest = Infinity;
  for (let round = 0; round < rounds; round++) {
    const start = performance.now();
    run();
    fastest = Math.min(fastest, performance.now() - start);
  }
  return fastest;
}
