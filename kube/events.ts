// Events on the objects users look at (`kubectl describe` shows them).
import { K8s, kind, Log } from "pepr";

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

/** Records an Event; a failure is logged, never thrown: an Event is a courtesy, not state. */
export async function recordEvent(
  object: InvolvedObject,
  note: EventNote,
  component: string,
): Promise<void> {
  const namespace = object.metadata?.namespace ?? "default";
  const now = new Date();
  try {
    await K8s(kind.CoreEvent).Create({
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
      message: note.message,
      source: { component },
      reportingComponent: `bulwark.dev/${component}`,
      reportingInstance: process.env.HOSTNAME ?? "local",
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
    });
  } catch (error) {
    Log.warn(
      { ns: namespace, name: object.metadata?.name, reason: note.reason, err: String(error) },
      "could not record an Event",
    );
  }
}
