// The gateway's own small answers: plain text, fixed bodies built once. One table of reason
// phrases serves both request paths and the policy's own answers (redirects, preflight, robots).
import { STATUS_CODES, type ServerResponse } from "node:http";
import type { ServerHttp2Stream } from "node:http2";
import type { Duplex } from "node:stream";

/** ingress-nginx's wording where it differs from Node's (413). */
const REASONS: Record<number, string> = {
  200: "OK",
  204: "No Content",
  308: "Permanent Redirect",
  400: "Bad Request",
  404: "Not Found",
  413: "Request Entity Too Large",
  431: "Request Header Fields Too Large",
  502: "Bad Gateway",
  503: "Service Unavailable",
  504: "Gateway Timeout",
};

/** The reason phrase of a status line. */
export function reasonPhrase(status: number): string {
  return REASONS[status] ?? STATUS_CODES[status] ?? "Unknown";
}

const BODIES = new Map<number, Buffer>();

/** "404 Not Found\n": the body of every own error answer. */
function bodyOf(status: number): Buffer {
  let body = BODIES.get(status);
  if (body === undefined) {
    body = Buffer.from(`${status} ${reasonPhrase(status)}\n`);
    BODIES.set(status, body);
  }
  return body;
}

/**
 * Ends an answer that cannot be finished. On HTTP/2 (Node's compatibility response) the stream is
 * reset with INTERNAL_ERROR: destroyed without an error, or closed, Node ends it with END_STREAM
 * first, and the client would take a truncated body for a whole one.
 */
export function cutShort(res: ServerResponse): void {
  const stream = (res as unknown as { stream?: ServerHttp2Stream }).stream;
  if (stream === undefined) res.destroy();
  else resetStream(stream);
}

/**
 * Resets an HTTP/2 stream whose answer was cut short (RST_STREAM INTERNAL_ERROR). Not
 * `close(code)`: once the DATA so far has left, Node ends the writable side first, and the client
 * would see END_STREAM (a clean, truncated answer) before the reset.
 */
export function resetStream(stream: ServerHttp2Stream): void {
  stream.destroy(CUT_SHORT);
}

const CUT_SHORT = new Error("the answer was cut short");

/** Answers with a small plain-text body; a response already started is cut instead. */
export function reply(res: ServerResponse, status: number, close = false): void {
  if (res.headersSent) {
    cutShort(res);
    return;
  }
  const body = bodyOf(status);
  const headers = [
    "Content-Type",
    "text/plain; charset=utf-8",
    "Content-Length",
    String(body.length),
  ];
  // HTTP/2 has no Connection field: a refused stream ends alone.
  if (close && !("stream" in res)) headers.push("Connection", "close");
  res.writeHead(status, headers);
  res.end(body);
}

/** The same answer as HTTP/1.1 text, for the raw-socket paths (fast path, refused upgrades). */
export function replyText(status: number, close: boolean): string {
  const body = bodyOf(status);
  return `HTTP/1.1 ${status} ${reasonPhrase(status)}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${body.length}\r\n${close ? "Connection: close\r\n" : ""}\r\n${body.toString("latin1")}`;
}

/** The same answer on a raw socket (a refused upgrade), then the socket is closed. */
export function replyOnSocket(socket: Duplex, status: number): void {
  socket.end(replyText(status, true));
}

/** The same answer on an HTTP/2 stream (its body left out for HEAD); a stream already answering is reset. */
export function replyOnStream(stream: ServerHttp2Stream, status: number, bodyless: boolean): void {
  if (stream.destroyed) return;
  if (stream.headersSent) {
    resetStream(stream);
    return;
  }
  const body = bodyOf(status);
  const headers = {
    ":status": status,
    "content-type": "text/plain; charset=utf-8",
    "content-length": body.length,
  };
  stream.respond(headers, { endStream: bodyless });
  if (!bodyless) stream.end(body);
}
