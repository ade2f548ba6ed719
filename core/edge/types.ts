// Minimal structural shapes of the objects the edge-health logic reads. They are structural (not
// @kubernetes/client-node's classes) so that core/ stays free of I/O libraries, and loose enough
// that a V1Node, V1Pod, V1Endpoints or V1EndpointSlice, and the raw JSON that Pepr hands us,
// are both assignable: timestamps may be Date objects (client-node) or RFC 3339 strings (JSON).

/** A metav1.Time as either client library delivers it. */
export type KubeTime = Date | string;

export interface Meta {
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  labels?: Readonly<Record<string, string>>;
  annotations?: Readonly<Record<string, string>>;
  deletionTimestamp?: KubeTime;
}

export interface Taint {
  key: string;
  effect: string;
  value?: string;
  timeAdded?: KubeTime;
}

export interface NodeCondition {
  type: string;
  status: string;
  lastTransitionTime?: KubeTime;
  lastHeartbeatTime?: KubeTime;
  reason?: string;
  message?: string;
}

export interface Node {
  metadata?: Meta;
  spec?: { taints?: readonly Taint[] };
  status?: { conditions?: readonly NodeCondition[] };
}

export interface PodCondition {
  type: string;
  status: string;
  lastTransitionTime?: KubeTime;
}

export interface ContainerStatus {
  name?: string;
  restartCount?: number;
  state?: { waiting?: { reason?: string } };
}

export interface Pod {
  metadata?: Meta;
  spec?: { nodeName?: string };
  status?: {
    conditions?: readonly PodCondition[];
    containerStatuses?: readonly ContainerStatus[];
  };
}

export interface ObjectRef {
  kind?: string;
  name?: string;
  namespace?: string;
  uid?: string;
}

export interface EndpointAddress {
  ip: string;
  hostname?: string;
  nodeName?: string;
  targetRef?: ObjectRef;
}

export interface EndpointSubset {
  addresses?: EndpointAddress[];
  notReadyAddresses?: EndpointAddress[];
  ports?: readonly unknown[];
}

export interface Endpoints {
  metadata?: Meta;
  subsets?: EndpointSubset[];
}

export interface EndpointConditions {
  ready?: boolean;
  serving?: boolean;
  terminating?: boolean;
}

export interface SliceEndpoint {
  addresses: readonly string[];
  conditions?: EndpointConditions;
  nodeName?: string;
  targetRef?: ObjectRef;
}

export interface EndpointSlice {
  metadata?: Meta;
  /** null when the slice has none: discovery/v1 has no omitempty here, so the controller sends null. */
  endpoints?: SliceEndpoint[] | null;
}

export type { JsonPatchOp } from "../json-patch";

/** Well-known Kubernetes names (not Bulwark's, so they live here rather than in core/names.ts). */
export const UNREACHABLE_TAINT_KEY = "node.kubernetes.io/unreachable";
export const NODE_READY = "Ready";
export const POD_READY = "Ready";

/** Milliseconds since the epoch, or undefined when absent or unparseable. */
export function timeMs(time: KubeTime | undefined): number | undefined {
  if (time === undefined) return undefined;
  const ms = time instanceof Date ? time.getTime() : Date.parse(time);
  return Number.isNaN(ms) ? undefined : ms;
}

/**
 * A time as the API server serialises metav1.Time (RFC 3339, whole seconds, UTC), so that a JSON
 * Patch `test` built from a client-node Date equals the stored string byte for byte.
 */
export function kubeTimeString(time: KubeTime): string {
  if (typeof time === "string") return time;
  return time.toISOString().replace(/\.\d{3}Z$/, "Z");
}

/** The node's Ready condition, if it reports one. */
export function nodeReady(node: Node): NodeCondition | undefined {
  return node.status?.conditions?.find(c => c.type === NODE_READY);
}
