// Canary by header on gRPC metadata: grpc-js sends metadata as HTTP/2 header fields, so
// canary-by-header (and -value) pick the canary backend of a backend-protocol GRPC route exactly
// as for any request (ingress-nginx's semantics: "always" / the value picks it, "never" and
// anything else leave the main backend).
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import * as grpc from "@grpc/grpc-js";
import { startDataPlane, type DataPlane } from "../../data-plane";
import { ingress, view } from "../../routing/testkit";
import { loopback } from "../testkit";
import { gatewayClientArgs, rawMethod } from "./testkit";

const P = "nginx.ingress.kubernetes.io/";
const SERVICE = { Who: rawMethod("test.Canary", "Who") };
const CanaryClient = grpc.makeGenericClientConstructor(SERVICE, "Canary");
type Client = grpc.Client & { Who: (...args: unknown[]) => unknown };

/** A grpc-js backend answering its own name. */
async function namedGrpcBackend(name: string): Promise<{ server: grpc.Server; port: number }> {
  const server = new grpc.Server();
  server.addService(SERVICE, {
    Who: (_call: grpc.ServerUnaryCall<Buffer, Buffer>, done: grpc.sendUnaryData<Buffer>) =>
      done(null, Buffer.from(name)),
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (e, p) =>
      e ? reject(e) : resolve(p),
    ),
  );
  return { server, port };
}

/** The main Ingress of `host` and its canary by header (with `value` when given), both GRPC. */
function canaryPair(host: string, header: string, value?: string) {
  const grpcBackend = { [`${P}backend-protocol`]: "GRPC" };
  const name = host.split(".")[0]!;
  return [
    ingress({
      name,
      annotations: grpcBackend,
      rules: [{ host, paths: [{ path: "/", service: "main" }] }],
    }),
    ingress({
      name: `${name}-canary`,
      created: "2025-01-02T00:00:00Z",
      annotations: {
        ...grpcBackend,
        [`${P}canary`]: "true",
        [`${P}canary-by-header`]: header,
        ...(value === undefined ? {} : { [`${P}canary-by-header-value`]: value }),
      },
      rules: [{ host, paths: [{ path: "/", service: "canary" }] }],
    }),
  ];
}

describe("data plane: canary by header on gRPC metadata", () => {
  let main: { server: grpc.Server; port: number };
  let canary: { server: grpc.Server; port: number };
  let plane: DataPlane;
  const clients: Client[] = [];

  before(async () => {
    [main, canary] = [await namedGrpcBackend("main"), await namedGrpcBackend("canary")];
    plane = await startDataPlane({ httpPort: 0, httpsPort: 0, host: "127.0.0.1" });
    await plane.apply(
      view(
        1,
        [...canaryPair("beta.test", "x-beta"), ...canaryPair("team.test", "x-team", "blue")],
        [loopback("main", main.port), loopback("canary", canary.port)],
      ),
    );
  });
  after(async () => {
    for (const client of clients) client.close();
    await plane.close({ drainMs: 200 });
    main.server.forceShutdown();
    canary.server.forceShutdown();
  });

  /** Which backend answered a call to `host` with this metadata. */
  async function who(host: string, metadata: Record<string, string> = {}): Promise<string> {
    const client = new CanaryClient(
      ...gatewayClientArgs(plane.httpsPort!, host),
    ) as unknown as Client;
    clients.push(client);
    const md = new grpc.Metadata();
    for (const [key, value] of Object.entries(metadata)) md.set(key, value);
    return new Promise((resolve, reject) =>
      client.Who(Buffer.alloc(0), md, (e: grpc.ServiceError | null, reply: Buffer) =>
        e ? reject(e) : resolve(reply.toString()),
      ),
    );
  }

  it("canary-by-header: metadata 'always' picks the canary; 'never', another value or none the main", async () => {
    assert.equal(await who("beta.test", { "x-beta": "always" }), "canary");
    assert.equal(await who("beta.test", { "x-beta": "never" }), "main");
    assert.equal(await who("beta.test", { "x-beta": "yes" }), "main");
    assert.equal(await who("beta.test"), "main");
    assert.equal(await who("beta.test", { "x-other": "always" }), "main");
  });

  it("canary-by-header-value: only the exact value picks the canary", async () => {
    assert.equal(await who("team.test", { "x-team": "blue" }), "canary");
    assert.equal(await who("team.test", { "x-team": "Blue" }), "main");
    assert.equal(await who("team.test", { "x-team": "always" }), "main");
    assert.equal(await who("team.test"), "main");
  });
});
