// The module's Events, on the kept-alive client and through Pepr's logger (kube/events.ts builds
// and records them). Not Pepr's K8s(): it pays a new TLS connection per call, once per injected pod.
import { Log } from "pepr";
import {
  recordEvent as record,
  type EventNote,
  type EventRecorder,
  type InvolvedObject,
} from "../../kube/events";
import { EVENTS, resourcePath } from "../../kube/api-paths";
import { keptAliveApi } from "../../kube/kept-alive-api";

export type { EventNote, InvolvedObject };

/** Records an Event from the capability `component`; a failure is logged, never thrown. */
export function recordEvent(
  object: InvolvedObject,
  note: EventNote,
  component: string,
): Promise<void> {
  const recorder: EventRecorder = {
    create: (namespace, event) => keptAliveApi().post(resourcePath(EVENTS, { namespace }), event),
    warn: (message, fields) => Log.warn(fields, message),
    reporter: { component, instance: process.env.HOSTNAME ?? "local" },
  };
  return record(recorder, object, note);
}
