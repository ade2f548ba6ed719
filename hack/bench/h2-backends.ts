// The backends of the HTTP/2 benchmarks, each a process of its own (its CPU measured apart from
// the proxy's), printing "listening <port>" when ready:
//   npx tsx hack/bench/h2-backends.ts http   a small fixed answer over HTTP/1.1 (h2-throughput.ts)
//   npx tsx hack/bench/h2-backends.ts grpc   a grpc-js unary echo, h2c (grpc-unary.ts)
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import * as grpc from "@grpc/grpc-js";
import { UNARY_SERVICE } from "./grpc-unary-service";

const BODY = "hello from the backend\n";

function httpBackend(): void {
  const server = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "text/plain", "content-length": BODY.length });
    res.end(BODY);
  });
  server.keepAliveTimeout = 75_000;
  server.listen(0, "127.0.0.1", () => {
    process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`);
  });
}

function grpcBackend(): void {
  const server = new grpc.Server();
  server.addService(UNARY_SERVICE, {
    Echo: (call: grpc.ServerUnaryCall<Buffer, Buffer>, done: grpc.sendUnaryData<Buffer>) =>
      done(null, call.request),
  });
  server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (error, port) => {
    if (error) throw error;
    process.stdout.write(`listening ${port}\n`);
  });
}

const kind = process.argv[2];
if (kind === "http") httpBackend();
else if (kind === "grpc") grpcBackend();
else throw new Error(`h2-backends: expected "http" or "grpc", got ${kind}`);
process.once("SIGTERM", () => process.exit(0));
