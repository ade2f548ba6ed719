// The @fastify/http-proxy peer of gateway-throughput.ts: one process proxying every path to the
// backend (its default undici pool keeps connections alive). Prints "listening" when ready.
//   npx tsx hack/bench/gateway-throughput-fastify.ts <port> <backend port>
import proxy from "@fastify/http-proxy";
import Fastify from "fastify";

async function main(): Promise<void> {
  const [port, backendPort] = process.argv.slice(2).map(Number);
  const app = Fastify({ logger: false });
  await app.register(proxy, { upstream: `http://127.0.0.1:${backendPort}`, prefix: "/" });
  await app.listen({ port, host: "127.0.0.1" });
  process.stdout.write("listening\n");
  process.once("SIGTERM", () => void app.close().then(() => process.exit(0)));
}

void main();
