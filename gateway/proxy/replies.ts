// The gateway's own small answers: plain text, fixed bodies built once. One table of reason
// phrases serves both request paths and the policy's own answers (redirects, preflight, robots).
import { STATUS_CODES, type ServerResponse } from "node:http";
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

/** Answers with a small plain-text body; a response already started is cut instead. */
export function reply(res: ServerResponse, status: number, close = false): void {
  if (res.headersSent) {
    res.destroy();
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
