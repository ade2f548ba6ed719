// Events on the objects users look at (`kubectl describe` shows them), for every Bulwark process.
// An Event is a courtesy, not state: a failure to record one is reported to `warn`, never thrown.
// Pepr-free: the module passes Pepr's client, the workloads client-node's.
import type { CoreV1Event } from "@kubernetes/client-node";

export interface InvolvedObject {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string; uid?: string };
}

export interface EventNote {
  type: "Normal" | "Warning";
  reason: string;
  message: string;
}

/** Who records: `component` ("ingress-guard", "permission-server"), on which replica. */
export interface EventReporter {
  component: string;
  instance: string;
}

/** Creates `event` in `namespace` through whichever client the process has. */
export type CreateEvent = (namespace: string, event: CoreV1Event) => Promise<unknown>;

export type WarnFn = (message: string, fields: Record<string, unknown>) => void;

/** The API server keeps a message of at most 1 KiB readable in `kubectl describe`. */
const MAX_MESSAGE = 1024;

/** The Event for `note` about `object` (pure). Cluster-scoped objects' Events go to `default`. */
export function eventFor(
  object: InvolvedObject,
  note: EventNote,
  reporter: EventReporter,
  now: Date,
): CoreV1Event {
  const namespace = object.metadata?.namespace ?? "default";
  return {
    metadata: { generateName: `${object.metadata?.name ?? "object"}.`, namespace },
    involvedObject: {
      apiVersion: object.apiVersion,
      kind: object.kind,
      name: object.metadata?.name,
      namespace: object.metadata?.namespace,
      uid: object.metadata?.uid,
    },
    type: note.type,
    reason: note.reason,
    message: note.message.slice(0, MAX_MESSAGE),
    source: { component: `bulwark-${reporter.component}` },
    reportingComponent: `bulwark.dev/${reporter.component}`,
    reportingInstance: reporter.instance,
    firstTimestamp: now,
    lastTimestamp: now,
    count: 1,
  };
}

/** Where a process's Events go: its client, its logger, its name. */
export interface EventRecorder {
  create: CreateEvent;
  warn: WarnFn;
  reporter: EventReporter;
}

/** Records an Event; never throws. */
export async function recordEvent(
  recorder: EventRecorder,
  object: InvolvedObject,
  note: EventNote,
): Promise<void> {
  const { create, warn, reporter } = recorder;
  const event = eventFor(object, note, reporter, new Date());
  const namespace = event.metadata.namespace ?? "default";
  try {
    await create(namespace, event);
  } catch (error) {
    warn("could not record an Event", {
      ns: namespace,
      name: object.metadata?.name,
      reason: note.reason,
      err: error instanceof Error ? error.message : String(error),
    });
  }
}
