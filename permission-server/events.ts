// Events on the pod (`kubectl describe pod` shows them): Granted, GrantFailed, GrantBlocked,
// Revoked. An Event is a courtesy, not state: a failure to record one is logged, never thrown.
import type { V1Pod } from "@kubernetes/client-node";
import type { Kube } from "./kube";
import { errorText, type Logger } from "../kube/log";

export interface EventNote {
  type: "Normal" | "Warning";
  reason: string;
  message: string;
}

export interface EventSink {
  kube: Kube;
  log: Logger;
  /** This replica's name (reportingInstance). */
  instance: string;
}

export async function recordPodEvent(sink: EventSink, pod: V1Pod, note: EventNote): Promise<void> {
  const { kube, log, instance } = sink;
  const namespace = pod.metadata?.namespace ?? "default";
  const now = new Date();
  try {
    await kube.core.createNamespacedEvent({
      namespace,
      body: {
        metadata: { generateName: `${pod.metadata?.name ?? "pod"}.`, namespace },
        involvedObject: {
          apiVersion: "v1",
          kind: "Pod",
          name: pod.metadata?.name,
          namespace,
          uid: pod.metadata?.uid,
        },
        type: note.type,
        reason: note.reason,
        message: note.message.slice(0, 1024),
        source: { component: "bulwark-permission-server" },
        reportingComponent: "bulwark.dev/permission-server",
        reportingInstance: instance,
        firstTimestamp: now,
        lastTimestamp: now,
        count: 1,
      },
    });
  } catch (error) {
    log.warn("could not record an Event", {
      ns: namespace,
      name: pod.metadata?.name,
      reason: note.reason,
      err: errorText(error),
    });
  }
}
