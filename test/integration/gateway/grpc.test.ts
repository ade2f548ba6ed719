// gRPC end to end through the real API server: an Ingress with backend-protocol GRPC to a grpc-js
// server, a grpc-js client over TLS + HTTP/2 to the gateway process: unary, server streaming, a
// deadline the gateway turns into DEADLINE_EXCEEDED, and an HTTP/1.1 request to the route is 502.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import * as grpc from "@grpc/grpc-js";
import { applyOrThrow } from "../../../hack/control-plane/kube";
import { waitUntil } from "../../harness/wait";
import { testCluster, testNamespace } from "../../harness/cluster";
import { askHttps } from "../../../gateway/proxy/h2/testkit";
import { gatewayClientArgs, rawMethod, readStream } from "../../../gateway/proxy/grpc/testkit";
import {
  endpointSlice,
  ensureIngressClass,
  ingress,
  localAddress,
  startGateway,
  type RunningGateway,
} from "./harness";

const cluster = testCluster();
const HOST = "grpc.example.com";
const P = "nginx.ingress.kubernetes.io/";

const SERVICE = {
  Unary: rawMethod("test.Echo", "Unary"),
  Count: rawMethod("test.Echo", "Count", true),
  Slow: rawMethod("test.Echo", "Slow"),
};
const EchoClient = grpc.makeGenericClientConstructor(SERVICE, "Echo");
type Client = grpc.Client & Record<keyof typeof SERVICE, (...args: unknown[]) => unknown>;

/** Unary calls the backend has answered. */
let unaryCalls = 0;

/** A grpc-js backend on this machine's address (the API server refuses loopback endpoints). */
async function startGrpcBackend(): Promise<{ server: grpc.Server; port: number }> {
  const server = new grpc.Server();
  server.addService(SERVICE, {
    Unary: (call: grpc.ServerUnaryCall<Buffer, Buffer>, done: grpc.sendUnaryData<Buffer>) => {
      unaryCalls++;
      done(null, Buffer.concat([Buffer.from("echo:"), call.request]));
    },
    Count: (call: grpc.ServerWritableStream<Buffer, Buffer>) => {
      for (let i = 0; i < Number(call.request.toString()); i++) call.write(Buffer.from(String(i)));
      call.end();
    },
    // Answers after 5 s: longer than any deadline the test sets.
    Slow: (_call: grpc.ServerUnaryCall<Buffer, Buffer>, done: grpc.sendUnaryData<Buffer>) => {
      setTimeout(() => done(null, Buffer.from("late")), 5000).unref();
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`${localAddress()}:0`, grpc.ServerCredentials.createInsecure(), (e, p) =>
      e ? reject(e) : resolve(p),
    ),
  );
  return { server, port };
}

describe("gateway gRPC (backend-protocol GRPC)", () => {
  let ns: string;
  let removeNamespace: () => Promise<void>;
  let backend: { server: grpc.Server; port: number };
  let gateway: RunningGateway;
  let client: Client;

  before(async () => {
    [ns, removeNamespace] = await testNamespace(cluster, "gw-grpc");
    await ensureIngressClass(cluster.kc);
    backend = await startGrpcBackend();
    await applyOrThrow(cluster.kc, [
      endpointSlice(ns, "echo", backend.port),
      ingress(ns, "echo", {
        host: HOST,
        service: "echo",
        annotations: { [`${P}backend-protocol`]: "GRPC" },
      }),
    ]);
    gateway = await startGateway({ kubeconfigPath: cluster.kubeconfigPath, namespace: ns });
    client = new EchoClient(...gatewayClientArgs(gateway.httpsPort, HOST)) as unknown as Client;
  });

  after(async () => {
    client?.close();
    await gateway?.stop();
    backend?.server.forceShutdown();
    await removeNamespace?.();
  });

  const unary = (body: string, options: grpc.CallOptions = {}) =>
    new Promise<Buffer>((resolve, reject) =>
      client.Unary(
        Buffer.from(body),
        new grpc.Metadata(),
        options,
        (e: grpc.ServiceError | null, r: Buffer) => (e ? reject(e) : resolve(r)),
      ),
    );

  it("passes a unary call to the grpc-js backend", async () => {
    // Until the Ingress is served, the gateway answers the call UNIMPLEMENTED (no such host).
    const reply = await waitUntil("the gRPC route", () => unary("hi").catch(() => undefined));
    assert.equal(reply.toString(), "echo:hi");
  });

  it("streams the server's messages in order", async () => {
    const { got, status } = await readStream(
      client.Count(Buffer.from("50")) as grpc.ClientReadableStream<Buffer>,
    );
    assert.equal(status.code, grpc.status.OK);
    assert.deepEqual(
      got,
      Array.from({ length: 50 }, (_, i) => String(i)),
    );
  });

  it("ends a call past its deadline with DEADLINE_EXCEEDED", async () => {
    const error = await new Promise<grpc.ServiceError | null>(resolve =>
      client.Slow(
        Buffer.from("x"),
        new grpc.Metadata(),
        { deadline: Date.now() + 300 },
        (e: grpc.ServiceError | null) => resolve(e),
      ),
    );
    assert.equal(error?.code, grpc.status.DEADLINE_EXCEEDED);
  });

  it("answers an HTTP/1.1 request to the gRPC route 502, never reaching the backend", async () => {
    const before = unaryCalls;
    const answer = await askHttps(gateway.httpsPort, HOST, "/test.Echo/Unary", {
      method: "POST",
      headers: { "content-type": "application/grpc" },
      body: Buffer.alloc(5),
    });
    assert.equal(answer.status, 502);
    assert.equal(unaryCalls, before);
  });
});
