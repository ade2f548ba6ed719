// Service backends to ready endpoints, from the Services' EndpointSlices (label
// kubernetes.io/service-name). As kube-proxy and ingress-nginx do, a backend port is a *Service*
// port: a number is looked up among the Service's ports and the EndpointSlice port is the one with
// that Service port's name (a slice port carries the target port's number, not the Service's). A
// port the Service does not have has no endpoints. Without the Service in the view (not listed
// yet), a number matches a slice with one port, or a slice port of the same number.
import type { V1EndpointSlice, V1Service } from "@kubernetes/client-node";
import { Backend, type Endpoint } from "./table";

export const SERVICE_NAME_LABEL = "kubernetes.io/service-name";

export interface BackendRef {
  namespace: string;
  service: string;
  port: { number?: number; name?: string };
}

export class EndpointIndex {
  private readonly slices = new Map<string, V1EndpointSlice[]>();
  private readonly services = new Map<string, V1Service>();
  private readonly backends = new Map<string, Backend>();

  constructor(slices: readonly V1EndpointSlice[], services: readonly V1Service[] = []) {
    for (const slice of slices) this.addSlice(slice);
    for (const service of services) {
      const meta = service.metadata;
      this.services.set(`${meta?.namespace ?? ""}/${meta?.name ?? ""}`, service);
    }
  }

  private addSlice(slice: V1EndpointSlice): void {
    const service = slice.metadata?.labels?.[SERVICE_NAME_LABEL];
    if (service === undefined) return;
    const key = `${slice.metadata?.namespace ?? ""}/${service}`;
    const list = this.slices.get(key);
    if (list === undefined) this.slices.set(key, [slice]);
    else list.push(slice);
  }

  get backendCount(): number {
    return this.backends.size;
  }

  get endpointCount(): number {
    let count = 0;
    for (const backend of this.backends.values()) count += backend.endpoints.length;
    return count;
  }

  /** The first port of a Service in the view (ingress-nginx's default-backend port); undefined without one. */
  firstPort(namespace: string, service: string): number | undefined {
    return this.services.get(`${namespace}/${service}`)?.spec?.ports?.[0]?.port;
  }

  /** The shared Backend of a Service port (no endpoints when none is ready or known). */
  backend(ref: BackendRef): Backend {
    const portText = ref.port.name ?? String(ref.port.number ?? "");
    const key = `${ref.namespace}/${ref.service}:${portText}`;
    let backend = this.backends.get(key);
    if (backend === undefined) {
      backend = new Backend(key, this.endpointsOf(ref));
      this.backends.set(key, backend);
    }
    return backend;
  }

  private endpointsOf(ref: BackendRef): Endpoint[] {
    const serviceKey = `${ref.namespace}/${ref.service}`;
    const portName = ref.port.name ?? this.servicePortName(serviceKey, ref.port.number);
    if (portName === null) return [];
    const seen = new Map<string, Endpoint>();
    for (const slice of this.slices.get(serviceKey) ?? []) {
      const port = slicePort(slice, portName, ref.port.number);
      if (port === undefined) continue;
      addReadyEndpoints(slice, port, seen);
    }
    return [...seen.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  /**
   * The name of the Service port with this number ("" when unnamed); null when the Service has no
   * such port; undefined when the view does not have the Service.
   */
  private servicePortName(
    serviceKey: string,
    number: number | undefined,
  ): string | null | undefined {
    const ports = this.services.get(serviceKey)?.spec?.ports;
    if (ports === undefined || number === undefined) return undefined;
    const port = ports.find(p => p.port === number && (p.protocol ?? "TCP") === "TCP");
    return port === undefined ? null : (port.name ?? "");
  }
}

function slicePort(
  slice: V1EndpointSlice,
  portName: string | undefined,
  number: number | undefined,
): number | undefined {
  const ports = (slice.ports ?? []).filter(p => (p.protocol ?? "TCP") === "TCP");
  if (portName !== undefined) return ports.find(p => (p.name ?? "") === portName)?.port;
  if (ports.length === 1) return ports[0]?.port;
  return ports.find(p => p.port === number)?.port;
}

function addReadyEndpoints(slice: V1EndpointSlice, port: number, into: Map<string, Endpoint>) {
  if (slice.addressType === "FQDN") return;
  const v6 = slice.addressType === "IPv6";
  for (const endpoint of slice.endpoints ?? []) {
    if (endpoint.conditions?.ready === false) continue;
    for (const address of endpoint.addresses) {
      const key = v6 ? `[${address}]:${port}` : `${address}:${port}`;
      if (!into.has(key)) into.set(key, { address, port, key });
    }
  }
}
