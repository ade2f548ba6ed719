// The load of grpc-unary.ts, one process of it: `channels` grpc-js channels to the proxy over
// TLS (each its own connection), `inFlight` unary calls kept going across them. Calls run from
// now on (warming the JIT and the connections); those started in [startAt, startAt + duration)
// are counted. Prints one line: "result <json>" with the calls, failures and latencies (µs).
//   npx tsx hack/bench/grpc-unary-client.ts <port> <host> <channels> <inFlight> <startAt ms> <duration s>
import * as grpc from "@grpc/grpc-js";
import { EchoClient } from "./grpc-unary-service";

type Echo = grpc.Client & {
  Echo(request: Buffer, callback: (error: grpc.ServiceError | null) => void): grpc.ClientUnaryCall;
};

const MESSAGE = Buffer.from("hello from the client");

export interface ClientResult {
  calls: number;
  failures: number;
  /** The first failure's message, when there was one. */
  firstFailure?: string;
  latenciesUs: number[];
}

function channel(port: number, host: string): Echo {
  // The bench's certificate is self-signed: not verified (both proxies serve the same one).
  const credentials = grpc.credentials.createSsl(null, null, null, { rejectUnauthorized: false });
  return new EchoClient(`127.0.0.1:${port}`, credentials, {
    "grpc.default_authority": host,
    "grpc.ssl_target_name_override": host,
    // Without it, clients of one target share one subchannel (one connection).
    "grpc.use_local_subchannel_pool": 1,
  }) as unknown as Echo;
}

function main(): void {
  const [port, host, channels, inFlight, startAt, duration] = process.argv.slice(2);
  const clients = Array.from({ length: Number(channels) }, () => channel(Number(port), host!));
  const begin = Number(startAt);
  const end = begin + Number(duration) * 1000;
  const result: ClientResult = { calls: 0, failures: 0, latenciesUs: [] };
  let running = Number(inFlight);
  const loop = (client: Echo) => {
    const started = performance.timeOrigin + performance.now();
    if (started >= end) {
      if (--running === 0) finish();
      return;
    }
    const t0 = performance.now();
    client.Echo(MESSAGE, error => {
      const counted = started >= begin;
      if (counted && error === null) {
        result.calls++;
        result.latenciesUs.push(Math.round((performance.now() - t0) * 1000));
      } else if (counted) {
        result.failures++;
        result.firstFailure ??= error!.message;
      }
      loop(client);
    });
  };
  const finish = () => {
    for (const client of clients) client.close();
    process.stdout.write(`result ${JSON.stringify(result)}\n`, () => process.exit(0));
  };
  for (let i = 0; i < running; i++) loop(clients[i % clients.length]!);
}

main();
