// Events on the pod (`kubectl describe pod` shows them): Granted, GrantFailed, GrantBlocked,
// Revoked, recorded through kube/events.ts with the permission server's client.
import type { V1Pod } from "@kubernetes/client-node";
import { recordEvent, type EventNote, type EventRecorder } from "../../kube/events";
import type { Logger } from "../../kube/log";
import type { Kube } from "../kube";

export type { EventNote };

export interface EventSink {
  kube: Kube;
  log: Logger;
  /** This replica's name (reportingInstance). */
  instance: string;
}

export function recordPodEvent(sink: EventSink, pod: V1Pod, note: EventNote): Promise<void> {
  const { kube, log, instance } = sink;
  const recorder: EventRecorder = {
    create: (namespace, body) => kube.core.createNamespacedEvent({ namespace, body }),
    warn: (message, fields) => log.warn(message, fields),
    reporter: { component: "permission-server", instance },
  };
  return recordEvent(recorder, { ...pod, apiVersion: "v1", kind: "Pod" }, note);
}
