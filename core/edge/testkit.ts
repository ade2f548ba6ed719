// Test support for core/edge (imported only by *.test.ts, never by index.ts): a strict RFC 6902
// applier, so tests check what a patch *does* to an object rather than only its text, and
// fixtures for nodes and pods around one partition.
import type { JsonPatchOp, Node, Pod } from "./types";
import { voteAnnotations, type VoteTerm } from "./vote";

type Json = unknown;

function parentAndKey(
  doc: Json,
  path: string,
): { parent: Record<string, Json> | Json[]; key: string } {
  const parts = path
    .split("/")
    .slice(1)
    .map(p => p.replace(/~1/g, "/").replace(/~0/g, "~"));
  const key = parts.pop();
  if (key === undefined) throw new Error(`bad path ${path}`);
  let parent: Json = doc;
  for (const part of parts) {
    if (typeof parent !== "object" || parent === null) throw new Error(`no parent for ${path}`);
    parent = (parent as Record<string, Json>)[part];
  }
  if (typeof parent !== "object" || parent === null) throw new Error(`no parent for ${path}`);
  return { parent: parent as Record<string, Json> | Json[], key };
}

function arrayIndex(array: Json[], key: string, forAdd: boolean): number {
  const index = key === "-" && forAdd ? array.length : Number(key);
  const max = forAdd ? array.length : array.length - 1;
  if (!Number.isInteger(index) || index < 0 || index > max)
    throw new Error(`index ${key} out of range`);
  return index;
}

function applyOne(doc: Json, op: JsonPatchOp): void {
  const { parent, key } = parentAndKey(doc, op.path);
  if (Array.isArray(parent)) {
    const index = arrayIndex(parent, key, op.op === "add");
    if (op.op === "add") parent.splice(index, 0, structuredClone(op.value));
    else if (op.op === "remove") parent.splice(index, 1);
    else if (op.op === "replace") parent[index] = structuredClone(op.value);
    else if (JSON.stringify(parent[index]) !== JSON.stringify(op.value))
      throw new Error(`test failed at ${op.path}`);
    return;
  }
  const exists = Object.hasOwn(parent, key);
  if (op.op !== "add" && !exists) throw new Error(`${op.op}: no member at ${op.path}`);
  if (op.op === "remove") delete parent[key];
  else if (op.op === "test") {
    if (JSON.stringify(parent[key]) !== JSON.stringify(op.value))
      throw new Error(`test failed at ${op.path}`);
  } else parent[key] = structuredClone(op.value);
}

/** `doc` after `ops`, applied in order as the API server does; throws where it would fail. */
export function applyPatch<T>(doc: T, ops: readonly JsonPatchOp[]): T {
  // JSON round trip: the API server patches the JSON form (Dates become strings).
  const copy = JSON.parse(JSON.stringify(doc)) as T;
  for (const op of ops) applyOne(copy, op);
  return copy;
}

export const T0 = Date.parse("2024-05-01T10:00:00Z");
export const MINUTE = 60_000;
export const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");

/** A vote's term around T0: decided a minute before, valid for the default longest term. */
export const TERM: VoteTerm = { decidedAtMs: T0 - MINUTE, validUntilMs: T0 + 9 * MINUTE };

/** A node that went Ready→Unknown at T0, with the given node-health vote and its term. */
export function unknownNode(
  name: string,
  vote: "true" | "false" | undefined,
  term: VoteTerm = TERM,
): Node {
  return {
    metadata: {
      name,
      annotations: vote === undefined ? {} : voteAnnotations(vote, term),
    },
    status: { conditions: [{ type: "Ready", status: "Unknown", lastTransitionTime: iso(T0) }] },
  };
}

export function readyNode(name: string): Node {
  return {
    metadata: { name, annotations: voteAnnotations("true", TERM) },
    status: {
      conditions: [{ type: "Ready", status: "True", lastTransitionTime: iso(T0 - 60 * MINUTE) }],
    },
  };
}

/** A pod whose Ready condition last changed to `ready` at `sinceMs`. */
export function pod(options: {
  name: string;
  node: string;
  ready: "True" | "False";
  sinceMs: number;
  terminating?: boolean;
  crashLoop?: boolean;
  uid?: string;
}): Pod {
  return {
    metadata: {
      name: options.name,
      namespace: "ns",
      uid: options.uid ?? `uid-${options.name}`,
      deletionTimestamp: options.terminating ? iso(T0) : undefined,
    },
    spec: { nodeName: options.node },
    status: {
      conditions: [
        { type: "Ready", status: options.ready, lastTransitionTime: iso(options.sinceMs) },
      ],
      containerStatuses: options.crashLoop
        ? [{ name: "c", restartCount: 7, state: { waiting: { reason: "CrashLoopBackOff" } } }]
        : [{ name: "c", restartCount: 0, state: {} }],
    },
  };
}
