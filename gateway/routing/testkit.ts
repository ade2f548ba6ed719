// Small builders of Ingress and EndpointSlice objects for the gateway's tests and benchmarks.
import type { V1EndpointSlice, V1Ingress } from "@kubernetes/client-node";
import type { GatewayView, TlsPair } from "../view";

export interface PathSpec {
  path: string;
  type?: "Exact" | "Prefix" | "ImplementationSpecific";
  service: string;
  port?: number | string;
}

export interface IngressSpec {
  namespace?: string;
  name: string;
  created?: string;
  annotations?: Record<string, string>;
  rules?: { host?: string; paths: PathSpec[] }[];
  defaultBackend?: { service: string; port?: number | string };
  tls?: { hosts: string[]; secretName: string }[];
}

function portOf(port: number | string | undefined) {
  const value = port ?? 80;
  return typeof value === "number" ? { number: value } : { name: value };
}

export function ingress(spec: IngressSpec): V1Ingress {
  return {
    apiVersion: "networking.k8s.io/v1",
    kind: "Ingress",
    metadata: {
      namespace: spec.namespace ?? "default",
      name: spec.name,
      creationTimestamp: (spec.created ?? "2025-01-01T00:00:00Z") as unknown as Date,
      annotations: spec.annotations,
    },
    spec: {
      ingressClassName: "bulwark",
      defaultBackend:
        spec.defaultBackend === undefined
          ? undefined
          : {
              service: {
                name: spec.defaultBackend.service,
                port: portOf(spec.defaultBackend.port),
              },
            },
      rules: spec.rules?.map(rule => ({
        host: rule.host,
        http: {
          paths: rule.paths.map(p => ({
            path: p.path,
            pathType: p.type ?? "Prefix",
            backend: { service: { name: p.service, port: portOf(p.port) } },
          })),
        },
      })),
      tls: spec.tls,
    },
  };
}

export interface SliceSpec {
  namespace?: string;
  service: string;
  name?: string;
  ports: { name?: string; port: number }[];
  endpoints: { address: string; ready?: boolean }[];
}

export function endpointSlice(spec: SliceSpec): V1EndpointSlice {
  return {
    apiVersion: "discovery.k8s.io/v1",
    kind: "EndpointSlice",
    metadata: {
      namespace: spec.namespace ?? "default",
      name: spec.name ?? `${spec.service}-abc`,
      labels: { "kubernetes.io/service-name": spec.service },
    },
    addressType: "IPv4",
    ports: spec.ports.map(p => ({ name: p.name, port: p.port, protocol: "TCP" })),
    endpoints: spec.endpoints.map(e => ({
      addresses: [e.address],
      conditions: e.ready === undefined ? {} : { ready: e.ready },
    })),
  };
}

/** The slice of `service`: one ready-by-default endpoint on 127.0.0.1 at `port` (test backends). */
export function loopbackSlice(service: string, port: number): V1EndpointSlice {
  return endpointSlice({ service, ports: [{ port }], endpoints: [{ address: "127.0.0.1" }] });
}

export function view(
  version: number,
  ingresses: V1Ingress[],
  endpointSlices: V1EndpointSlice[] = [],
  tlsPairs: TlsPair[] = [],
): GatewayView {
  return { version, ingresses, endpointSlices, tlsPairs };
}
