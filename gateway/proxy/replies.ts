// The gateway's own small answers: plain text, fixed bodies built once.
import type { ServerResponse } from "node:http";
import type { Duplex } from "node:stream";

const TEXT: Record<number, string> = {
  400: "400 Bad Request\n",
  404: "404 Not Found\n",
  413: "413 Request Entity Too Large\n",
  502: "502 Bad Gateway\n",
  503: "503 Service Unavailable\n",
  504: "504 Gateway Timeout\n",
};

const BODIES = new Map<number, Buffer>(
  Object.entries(TEXT).map(([status, text]) => [Number(status), Buffer.from(text)]),
);

/** Answers with a small plain-text body; a response already started is cut instead. */
export function reply(res: ServerResponse, status: number, close = false): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body = BODIES.get(status) ?? Buffer.from(`${status}\n`);
  const headers = [
    "Content-Type",
    "text/plain; charset=utf-8",
    "Content-Length",
    String(body.length),
  ];
  if (close) headers.push("Connection", "close");
  res.writeHead(status, headers);
  res.end(body);
}

/** The same answer on a raw socket (a refused upgrade), then the socket is closed. */
export function replyOnSocket(socket: Duplex, status: number): void {
  const body = BODIES.get(status) ?? Buffer.from(`${status}\n`);
  const reason = (TEXT[status] ?? `${status} Error\n`).slice(4).trim();
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body.toString()}`,
  );
}
