// Pepr 1.1.4 deep-copies every admission request with ramda's clone: a mutation twice (the
// request's object, then the result it diffs against it), a validation once. ramda's clone keeps a
// map of what it copied for cycles, keyed by the types of an object's values; every object of one
// shape lands in one bucket, which each copy scans: time quadratic in the objects of one shape.
// The API server's managed fields give each env var, port or volume mount of a pod an object and
// empty objects of its own, so an annotated pod with 10 000 env vars (a create any tenant may send)
// held Bulwark's admission process for 7.7 s, and one with 20 000 ran past the webhook's 10 s
// timeout while every review behind it waited (hack/bench/pepr-clone.ts). An admission request is
// JSON, which the structured clone algorithm copies the same way in linear time; a value it cannot
// copy (one holding a function) still goes to ramda's clone.
import { createRequire } from "node:module";
import { Log } from "pepr";

type Clone = <T>(value: T) => T;

interface Ramda {
  clone: Clone;
}

/** ramda as Pepr loads it: the module instance whose clone Pepr looks up at each request. */
export function peprRamda(): Ramda {
  return createRequire(require.resolve("pepr"))("ramda") as Ramda;
}

function findPeprRamda(): Ramda | undefined {
  try {
    return peprRamda();
  } catch (error) {
    Log.warn(
      { err: String(error) },
      "Pepr's ramda not found: Pepr copies each review with its quadratic clone",
    );
    return undefined;
  }
}

const LINEAR = Symbol("bulwark.linearClone");

/**
 * Replaces `ramda.clone` with a linear copy for what the structured clone algorithm copies. Where
 * Pepr's ramda cannot be found, Pepr runs as it is, and a warning says so.
 */
export function linearClones(ramda: Ramda | undefined = findPeprRamda()): void {
  if (ramda === undefined) return;
  const original = ramda.clone;
  if ((original as Clone & { [LINEAR]?: true })[LINEAR]) return;
  const clone = <T>(value: T): T => {
    if (value === null || typeof value !== "object") return original(value);
    try {
      return structuredClone(value);
    } catch {
      return original(value);
    }
  };
  ramda.clone = Object.assign(clone, { [LINEAR]: true as const });
}
