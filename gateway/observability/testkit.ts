// A finished request as the tests' starting point: a routed GET that the upstream answered 200.
import type { RequestRecord } from "./traffic";

export const RECORD: RequestRecord = {
  host: "a.example.com",
  authority: "a.example.com:8080",
  ingress: "shop/web",
  service: "shop/web",
  variant: "main",
  method: "GET",
  path: "/",
  status: 200,
  requestBytes: 0,
  responseBytes: 100,
  durationSeconds: 0.003,
  upstreamSeconds: 0.002,
  upstream: "10.0.0.1:8080",
  decision: "no canary",
  upstreamStatus: 200,
  upstreamResponseSeconds: 0.0015,
  requestId: "0123456789abcdef0123456789abcdef",
  client: "203.0.113.7",
  peer: "203.0.113.7",
  userAgent: "curl/8.5.0",
  scheme: "http",
  protocol: "HTTP/1.1",
};
