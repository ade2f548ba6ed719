// gRPC through the whole data plane: a grpc-js client over TLS + HTTP/2 (ALPN h2) to the
// gateway's HTTPS listener, an Ingress with backend-protocol GRPC, a grpc-js backend behind it.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import * as grpc from "@grpc/grpc-js";
import { startDataPlane, type DataPlane } from "../../data-plane";
import { hostsView } from "../testkit";
import { gatewayClientArgs, rawMethod, readStream } from "./testkit";

const SERVICE = {
  Unary: rawMethod("test.Echo", "Unary"),
  Count: rawMethod("test.Echo", "Count", true),
};
const EchoClient = grpc.makeGenericClientConstructor(SERVICE, "Echo");

describe("data plane: gRPC over HTTP/2 to a backend-protocol GRPC route", () => {
  let server: grpc.Server;
  let plane: DataPlane;
  let client: grpc.Client & Record<"Unary" | "Count", (...args: unknown[]) => unknown>;
  const seen: Record<string, string>[] = [];

  before(async () => {
    server = new grpc.Server();
    server.addService(SERVICE, {
      Unary: (c: grpc.ServerUnaryCall<Buffer, Buffer>, done: grpc.sendUnaryData<Buffer>) => {
        seen.push(
          Object.fromEntries(Object.entries(c.metadata.getMap()).map(([k, v]) => [k, String(v)])),
        );
        const trailer = new grpc.Metadata();
        trailer.set("x-done-bin", Buffer.from([1, 2, 3]));
        done(null, Buffer.concat([Buffer.from("echo:"), c.request]), trailer);
      },
      Count: (c: grpc.ServerWritableStream<Buffer, Buffer>) => {
        for (let i = 0; i < Number(c.request.toString()); i++) c.write(Buffer.from(String(i)));
        c.end();
      },
    });
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (e, p) =>
        e ? reject(e) : resolve(p),
      ),
    );
    plane = await startDataPlane({ httpPort: 0, httpsPort: 0, host: "127.0.0.1" });
    await plane.apply(
      hostsView("echo", port, {
        grpc: { "nginx.ingress.kubernetes.io/backend-protocol": "GRPC" },
        office: {
          "nginx.ingress.kubernetes.io/backend-protocol": "GRPC",
          "nginx.ingress.kubernetes.io/allowlist-source-range": "10.0.0.0/8",
        },
      }),
    );
    client = clientFor("grpc.test");
  });
  /** A grpc-js client of the gateway's HTTPS port for `host` (its :authority and SNI name). */
  const clientFor = (host: string) =>
    new EchoClient(...gatewayClientArgs(plane.httpsPort!, host)) as unknown as typeof client;

  after(async () => {
    client.close();
    await plane.close({ drainMs: 200 });
    server.forceShutdown();
  });

  it("passes a unary call, with the gateway's forwarding headers and binary trailers", async () => {
    const md = new grpc.Metadata();
    md.set("x-who", "alice");
    const { reply, trailers } = await new Promise<{ reply: Buffer; trailers: grpc.Metadata }>(
      (resolve, reject) => {
        let reply: Buffer | undefined;
        const c = client.Unary(Buffer.from("hi"), md, (e: grpc.ServiceError | null, r: Buffer) =>
          e ? reject(e) : (reply = r),
        ) as grpc.ClientUnaryCall;
        c.on("status", (s: grpc.StatusObject) =>
          setImmediate(() => resolve({ reply: reply!, trailers: s.metadata })),
        );
      },
    );
    assert.equal(reply.toString(), "echo:hi");
    assert.deepEqual(trailers.get("x-done-bin"), [Buffer.from([1, 2, 3])]);
    const headers = seen.at(-1)!;
    assert.equal(headers["x-who"], "alice");
    assert.equal(headers["x-forwarded-for"], "127.0.0.1");
    assert.match(headers["x-request-id"] ?? "", /^[0-9a-f]{32}$/);
  });

  it("streams a server's messages in order", async () => {
    const { got, status } = await readStream(
      client.Count(Buffer.from("20")) as grpc.ClientReadableStream<Buffer>,
    );
    assert.equal(status.code, grpc.status.OK);
    assert.deepEqual(
      got,
      Array.from({ length: 20 }, (_, i) => String(i)),
    );
  });

  it("answers its own refusals as gRPC statuses: a source range, a host it does not serve", async () => {
    for (const [host, code, details] of [
      ["office.test", grpc.status.PERMISSION_DENIED, "403 source-range-denied"],
      ["nowhere.test", grpc.status.UNIMPLEMENTED, "404 Not Found"],
    ] as const) {
      const other = clientFor(host);
      try {
        const error = await new Promise<grpc.ServiceError | null>(resolve =>
          other.Unary(Buffer.from("x"), (e: grpc.ServiceError | null) => resolve(e)),
        );
        assert.equal(error?.code, code, host);
        assert.equal(error?.details, details, host);
      } finally {
        other.close();
      }
    }
  });
});
