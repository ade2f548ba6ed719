// Input generators for differential and property tests: deterministic, so a failure names an
// input that reproduces.

/** Pseudo-random numbers in [0, 1) from a seed (mulberry32). */
export function seededRandom(seed: number): () => number {
  let state = seed | 0;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** One element of a non-empty list. */
export function pick<T>(random: () => number, list: readonly T[]): T {
  return list[Math.floor(random() * list.length)]!;
}

/** Every string over `alphabet` from length 0 up to `maxLength`, shortest first. */
export function* shortStrings(alphabet: readonly string[], maxLength: number): Generator<string> {
  yield "";
  let previous = [""];
  for (let length = 1; length <= maxLength; length++) {
    const next: string[] = [];
    for (const prefix of previous) for (const char of alphabet) next.push(prefix + char);
    yield* next;
    previous = next;
  }
}
