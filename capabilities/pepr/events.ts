// The module's Events, through Pepr's client and logger (kube/events.ts builds and records them).
import { K8s, kind, Log } from "pepr";
import {
  recordEvent as record,
  type EventNote,
  type EventRecorder,
  type InvolvedObject,
} from "../../kube/events";

export type { EventNote, InvolvedObject };

/** Records an Event from the capability `component`; a failure is logged, never thrown. */
export function recordEvent(
  object: InvolvedObject,
  note: EventNote,
  component: string,
): Promise<void> {
  const recorder: EventRecorder = {
    create: (_namespace, event) => K8s(kind.CoreEvent).Create(event),
    warn: (message, fields) => Log.warn(fields, message),
    reporter: { component, instance: process.env.HOSTNAME ?? "local" },
  };
  return record(recorder, object, note);
}
