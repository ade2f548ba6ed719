// Connection upgrades (WebSocket): the handshake goes to an endpoint on a connection of its own;
// on 101 the gateway writes the upstream's answer back and pipes the two sockets together. The
// exchange is recorded when the client's connection closes, as nginx logs a WebSocket: status 101
// (or the refusal's status), duration the tunnel's life, bytes both ways through it.
import { request, type IncomingMessage } from "node:http";
import { request as requestTls } from "node:https";
import type { Socket } from "node:net";
import type { Duplex } from "node:stream";
import type { ExchangeTally } from "../observability/tally";
import type { Route } from "../routing/table";
import { reportTlsFailure, type UpstreamTls } from "../routing/upstream";
import { downstreamResponseHeaders } from "./headers";
import { replyOnSocket } from "./replies";
import { withStickyCookie, type StickyChoice } from "../policy/affinity";

function headBlock(status: number, message: string, raw: readonly string[]): string {
  let head = `HTTP/1.1 ${status} ${message}\r\n`;
  for (let i = 0; i < raw.length; i += 2) head += `${raw[i]}: ${raw[i + 1]}\r\n`;
  return `${head}\r\n`;
}

/** Proxies one upgrade request; `track` learns both sockets so a shutdown can close them. */
export function forwardUpgrade(
  req: IncomingMessage,
  client: Duplex,
  route: Route,
  options: {
    /** The normalized target (the canary's query actions applied). */
    target: string;
    head: Buffer;
    headers: string[];
    track: (socket: Duplex) => void;
    tally: ExchangeTally | undefined;
    /** TLS towards the backend; undefined: plain HTTP. */
    tls: UpstreamTls | undefined;
    /** upstream-hash-by's key ("" when the route does not hash). */
    hashKey?: string;
    /** affinity: the endpoint from the cookie, or a new one and its cookie (on the 101). */
    sticky?: StickyChoice | undefined;
  },
): void {
  const { head, tally } = options;
  // The status to record: 499 when the client leaves before any answer.
  let status = 499;
  client.once("close", () => tally?.finish(status));
  const sticky = options.sticky;
  const endpoint =
    sticky === undefined
      ? route.backend.pickBy(route.policy.balance, options.hashKey ?? "")
      : sticky.pick();
  if (endpoint === undefined) {
    status = 502;
    replyOnSocket(client, 502);
    return;
  }
  tally?.sent(endpoint.key);
  const tls = options.tls;
  const upstream = (tls === undefined ? request : requestTls)({
    ...tls?.options,
    host: endpoint.address,
    port: endpoint.port,
    method: req.method,
    path: options.target,
    headers: options.headers,
    agent: false,
    timeout: route.policy.connectTimeoutMs,
  });
  if (tls !== undefined)
    upstream.once("error", error => reportTlsFailure(endpoint.key, tls, error));
  const fail = (failed: number) => () => {
    upstream.destroy();
    if (!client.writable || client.destroyed) return;
    status = failed;
    replyOnSocket(client, failed);
  };
  upstream.once("timeout", fail(504));
  upstream.once("error", fail(502));
  // A client that leaves (or errs) before any answer: stop waiting upstream, record 499 (nginx).
  const leftEarly = () => {
    if (status !== 499) return;
    upstream.destroy();
    client.destroy();
  };
  client.once("error", leftEarly);
  client.once("end", leftEarly);
  upstream.once("upgrade", (res: IncomingMessage, socket: Socket, upstreamHead: Buffer) => {
    upstream.removeAllListeners("error");
    socket.setTimeout(0);
    status = 101;
    if (tally !== undefined) {
      tally.answered(101);
      socket.on("data", (chunk: Buffer) => (tally.responseBytes += chunk.length));
      client.on("data", (chunk: Buffer) => (tally.requestBytes += chunk.length));
    }
    const raw = withStickyCookie([...res.rawHeaders], sticky);
    client.write(headBlock(101, res.statusMessage ?? "Switching Protocols", raw));
    if (upstreamHead.length > 0) client.write(upstreamHead);
    if (head.length > 0) socket.write(head);
    options.track(client);
    options.track(socket);
    socket.on("error", () => client.destroy());
    client.on("error", () => socket.destroy());
    socket.on("close", () => client.destroy());
    client.on("close", () => socket.destroy());
    // Either side finishing closes the tunnel (as nginx does): no half-open WebSockets.
    socket.on("end", () => client.end(() => socket.end()));
    client.on("end", () => socket.end(() => client.end()));
    socket.pipe(client, { end: false });
    client.pipe(socket, { end: false });
  });
  upstream.once("response", (res: IncomingMessage) => {
    // The upstream refused the upgrade: pass its answer on and close.
    status = res.statusCode ?? 502;
    if (tally !== undefined) {
      tally.answered(status);
      res.on("data", (chunk: Buffer) => (tally.responseBytes += chunk.length));
    }
    client.write(
      headBlock(res.statusCode ?? 502, res.statusMessage ?? "", [
        ...downstreamResponseHeaders(res.rawHeaders),
        "Connection",
        "close",
      ]),
    );
    res.pipe(client);
  });
  upstream.end();
}
