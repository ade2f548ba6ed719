import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { V1Service } from "@kubernetes/client-node";
import { EndpointIndex, type BackendRef } from "./endpoints";
import { endpointSlice } from "./testkit";

function service(name: string, ports: { name?: string; port: number; target: number }[]) {
  return {
    metadata: { namespace: "default", name },
    spec: {
      ports: ports.map(p => ({ name: p.name, port: p.port, targetPort: p.target as never })),
    },
  } as V1Service;
}

// A two-port Service whose ports differ from their target ports, as most real Services do.
const twoPort = service("shop", [
  { name: "http", port: 80, target: 8080 },
  { name: "metrics", port: 9000, target: 9090 },
]);
const twoPortSlice = endpointSlice({
  service: "shop",
  ports: [
    { name: "metrics", port: 9090 },
    { name: "http", port: 8080 },
  ],
  endpoints: [{ address: "10.0.0.1" }],
});
// One unnamed port: the Service port is 80, the pods listen on 8080.
const onePort = service("solo", [{ port: 80, target: 8080 }]);
const onePortSlice = endpointSlice({
  service: "solo",
  ports: [{ port: 8080 }],
  endpoints: [{ address: "10.0.0.2" }],
});

const ref = (serviceName: string, port: BackendRef["port"]): BackendRef => ({
  namespace: "default",
  service: serviceName,
  port,
});

describe("EndpointIndex: Service port → EndpointSlice port", () => {
  const withServices = new EndpointIndex([twoPortSlice, onePortSlice], [twoPort, onePort]);
  const withoutServices = new EndpointIndex([twoPortSlice, onePortSlice]);
  const keys = (index: EndpointIndex, r: BackendRef) => index.backend(r).endpoints.map(e => e.key);

  const rows: { title: string; index: EndpointIndex; ref: BackendRef; want: string[] }[] = [
    {
      title: "given a Service port number, takes the slice port of the same name (80 → http 8080)",
      index: withServices,
      ref: ref("shop", { number: 80 }),
      want: ["10.0.0.1:8080"],
    },
    {
      title: "given the other Service port number, takes its slice port (9000 → metrics 9090)",
      index: withServices,
      ref: ref("shop", { number: 9000 }),
      want: ["10.0.0.1:9090"],
    },
    {
      title: "given a Service port name, takes the slice port of that name",
      index: withServices,
      ref: ref("shop", { name: "metrics" }),
      want: ["10.0.0.1:9090"],
    },
    {
      title: "given a number the Service lacks (the target port 8080), returns no endpoint",
      index: withServices,
      ref: ref("shop", { number: 8080 }),
      want: [],
    },
    {
      title: "given a name the Service lacks, returns no endpoint",
      index: withServices,
      ref: ref("shop", { name: "admin" }),
      want: [],
    },
    {
      title: "given an unnamed one-port Service, maps its port to the unnamed slice port",
      index: withServices,
      ref: ref("solo", { number: 80 }),
      want: ["10.0.0.2:8080"],
    },
    {
      title: "given a one-port Service and a number it lacks, returns no endpoint",
      index: withServices,
      ref: ref("solo", { number: 81 }),
      want: [],
    },
    {
      title: "given no Service and a two-port slice, a Service port number matches nothing",
      index: withoutServices,
      ref: ref("shop", { number: 80 }),
      want: [],
    },
    {
      title: "given no Service, a name still selects the slice port",
      index: withoutServices,
      ref: ref("shop", { name: "http" }),
      want: ["10.0.0.1:8080"],
    },
    {
      title: "given no Service and a one-port slice, any number takes that port",
      index: withoutServices,
      ref: ref("solo", { number: 80 }),
      want: ["10.0.0.2:8080"],
    },
  ];
  for (const row of rows) it(row.title, () => assert.deepEqual(keys(row.index, row.ref), row.want));

  it("ignores a UDP Service port of the same number", () => {
    const udp = {
      metadata: { namespace: "default", name: "dns" },
      spec: {
        ports: [
          { name: "udp", port: 53, protocol: "UDP" },
          { name: "tcp", port: 53, protocol: "TCP" },
        ],
      },
    } as V1Service;
    const slice = endpointSlice({
      service: "dns",
      ports: [{ name: "tcp", port: 5353 }],
      endpoints: [{ address: "10.0.0.3" }],
    });
    const index = new EndpointIndex([slice], [udp]);
    assert.deepEqual(keys(index, ref("dns", { number: 53 })), ["10.0.0.3:5353"]);
  });
});
