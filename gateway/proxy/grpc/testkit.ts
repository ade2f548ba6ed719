// Helpers for the gRPC tests: methods on raw bytes (no protobuf), a server-stream reader, and a
// grpc-js client of the gateway's HTTPS port.
import * as grpc from "@grpc/grpc-js";

const raw = (b: Buffer) => b;

/** A unary or server-streaming method of `service` whose messages are the bytes as sent. */
export function rawMethod(service: string, name: string, responseStream = false) {
  return {
    path: `/${service}/${name}`,
    requestStream: false,
    responseStream,
    requestSerialize: raw,
    requestDeserialize: raw,
    responseSerialize: raw,
    responseDeserialize: raw,
  };
}

/** A server stream's messages as text, and its final status. */
export async function readStream(
  stream: grpc.ClientReadableStream<Buffer>,
): Promise<{ got: string[]; status: grpc.StatusObject }> {
  const got: string[] = [];
  stream.on("data", (m: Buffer) => got.push(m.toString()));
  const status = await new Promise<grpc.StatusObject>(resolve => stream.on("status", resolve));
  return { got, status };
}

/** Options for a grpc-js client of the gateway's HTTPS port as `host` (:authority and SNI). */
export function gatewayClientArgs(port: number, host: string) {
  // The gateway's certificate for the name is not verified here.
  const credentials = grpc.credentials.createSsl(null, null, null, { rejectUnauthorized: false });
  const options = { "grpc.default_authority": host, "grpc.ssl_target_name_override": host };
  return [`127.0.0.1:${port}`, credentials, options] as const;
}
