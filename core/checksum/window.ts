// Which published checksum objects may attest the cluster: the newest, by creation, and the one
// before it only for a grace period after the newest appeared (a publish in flight: gateways may
// still be on the previous state). Without this bound, a cluster rolled back to any state ever
// attested would pass for as long as its old checksum object exists.

export interface Publication {
  name: string;
  /** metadata.creationTimestamp in ms; NaN (unknown) sorts oldest. */
  createdMs: number;
}

export interface TrustWindow {
  /** The names that may match now. */
  trusted: ReadonlySet<string>;
  /** When the previous object stops counting (ms); undefined when it does not count now. */
  closesAtMs: number | undefined;
}

/** The order publications are trusted in: newest creation first, then name (descending). */
export function newestFirst(a: Publication, b: Publication): number {
  const [x, y] = [
    Number.isNaN(a.createdMs) ? -Infinity : a.createdMs,
    Number.isNaN(b.createdMs) ? -Infinity : b.createdMs,
  ];
  return y - x || (a.name < b.name ? 1 : a.name > b.name ? -1 : 0);
}

export function trustWindow(
  published: readonly Publication[],
  nowMs: number,
  graceMs: number,
): TrustWindow {
  const [newest, previous] = [...published].sort(newestFirst);
  if (newest === undefined) return { trusted: new Set(), closesAtMs: undefined };
  const closesAtMs = newest.createdMs + graceMs;
  if (previous === undefined || !(nowMs < closesAtMs))
    return { trusted: new Set([newest.name]), closesAtMs: undefined };
  return { trusted: new Set([newest.name, previous.name]), closesAtMs };
}
