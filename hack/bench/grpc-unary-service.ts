// The unary method of grpc-unary.ts, raw bytes both ways (no protobuf: the bench measures the
// transport, and both sides skip the same codec).
import * as grpc from "@grpc/grpc-js";

const raw = (bytes: Buffer) => bytes;

export const UNARY_SERVICE = {
  Echo: {
    path: "/bench.Echo/Echo",
    requestStream: false,
    responseStream: false,
    requestSerialize: raw,
    requestDeserialize: raw,
    responseSerialize: raw,
    responseDeserialize: raw,
  },
} satisfies grpc.ServiceDefinition;

export const EchoClient = grpc.makeGenericClientConstructor(UNARY_SERVICE, "Echo");
