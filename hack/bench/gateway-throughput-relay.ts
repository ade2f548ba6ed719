// The floor of gateway-throughput.ts: the least a Node.js process can do to relay the bench's
// exchanges. Each client connection gets one upstream connection of its own and the bytes are
// piped both ways: no HTTP parsing, no routing, no pool. Whatever the gateway spends above this
// is ours; this much is Node's (libuv, streams, the kernel's loopback). Prints "listening".
//   npx tsx hack/bench/gateway-throughput-relay.ts <port> <backend port>
import { createConnection, createServer } from "node:net";

const [port, backendPort] = process.argv.slice(2).map(Number) as [number, number];
const server = createServer({ noDelay: true }, client => {
  const upstream = createConnection({ port: backendPort, host: "127.0.0.1", noDelay: true });
  const closeBoth = () => {
    client.destroy();
    upstream.destroy();
  };
  client.on("error", closeBoth).on("close", closeBoth);
  upstream.on("error", closeBoth).on("close", closeBoth);
  client.pipe(upstream);
  upstream.pipe(client);
});
server.listen(port, "127.0.0.1", () => process.stdout.write("listening\n"));
process.once("SIGTERM", () => server.close(() => process.exit(0)));
