// The contract between the gateway's control side (watch, guard, rollout, disk) and its data
// plane (routing, TLS, proxy). The control side decides *what* is served and hands the data plane
// one plain-JSON view; the data plane compiles it into an immutable routing table and swaps it in.
// Plain JSON on purpose: the same value goes to worker processes over IPC and to disk as the last
// good configuration.
import type { V1EndpointSlice, V1Ingress, V1Service } from "@kubernetes/client-node";

/**
 * A TLS key pair from a `kubernetes.io/tls` Secret, already decoded to PEM text. A Secret named by
 * proxy-ssl-secret also brings its ca.crt, and may have only that (cert and key "").
 */
export interface TlsPair {
  namespace: string;
  name: string;
  cert: string;
  key: string;
  ca?: string;
}

/**
 * A Secret that auth-secret names (an Opaque Secret of the Ingress's namespace): its data as the
 * API gives it, base64 per key.
 */
export interface AuthSecret {
  namespace: string;
  name: string;
  data: Record<string, string>;
}

export interface GatewayView {
  /** Chosen by the control side, increases with every view; what /healthz and workers report. */
  version: number;
  /** The Ingresses to serve, after class selection, the checksum guard and batched rollout. */
  ingresses: V1Ingress[];
  /**
   * Ingresses among them that fail Bulwark's review (namespace/name → why): their routes answer
   * 503 where they stand, a canary among them is not served. Absent: none (older saved views).
   */
  refused?: Record<string, string>;
  /** The Secrets those Ingresses name in `spec.tls` or proxy-ssl-secret, keyed by namespace/name inside. */
  tlsPairs: TlsPair[];
  /** The Secrets those Ingresses name in auth-secret. Absent: none (older saved views). */
  authSecrets?: AuthSecret[];
  /** EndpointSlices of the Services those Ingresses name (label kubernetes.io/service-name). */
  endpointSlices: V1EndpointSlice[];
  /**
   * Optional (added by the data plane): the Services those Ingresses name. Needed only to resolve
   * a backend port given by number when the Service's port differs from its target port and the
   * EndpointSlice has several ports; without it a number matches a one-port slice or the same number.
   */
  services?: V1Service[];
}

/** What the data plane reports after a swap, per worker. */
export interface AppliedView {
  version: number;
  /** Problems that left a route or certificate out (the rest of the view is still served). */
  problems: string[];
}
