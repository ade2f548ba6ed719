// HTTP/2 without TLS (h2c) on the HTTP port. Only prior knowledge is spoken (RFC 9113 3.3): a
// connection whose first bytes are the client preface goes to the same h2 front as the HTTPS
// listener's "h2" sockets; any other goes to the HTTP/1.1 path untouched. `Upgrade: h2c` (RFC 7540
// 3.2, deprecated by RFC 9113 3.1, not implemented by nginx either) is never honoured: such a
// request is answered as plain HTTP/1.1 and its Upgrade and HTTP2-Settings fields go nowhere.
import type { Socket } from "node:net";

/** The client connection preface (RFC 9113 3.4). */
export const CLIENT_PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1");

/**
 * What a connection's first bytes say: "h2" once the whole preface has come, "http1" as soon as a
 * byte differs from it, "more" while they are a proper prefix of it.
 */
export function prefaceMatch(data: Buffer): "h2" | "http1" | "more" {
  const length = Math.min(data.length, CLIENT_PREFACE.length);
  if (data.compare(CLIENT_PREFACE, 0, length, 0, length) !== 0) return "http1";
  return length === CLIENT_PREFACE.length ? "h2" : "more";
}

/**
 * Reads a new connection's first bytes until prefaceMatch decides, then hands the socket, paused,
 * with those bytes put back, to `next` (which resumes it). A client that sends part of the preface
 * and stalls goes to HTTP/1.1 after `timeoutMs`, whose own head timeout then answers it.
 */
export function sniffPreface(
  socket: Socket,
  timeoutMs: number,
  next: (socket: Socket, protocol: "h2" | "http1") => void,
): void {
  let buffered = Buffer.alloc(0);
  const decide = (protocol: "h2" | "http1") => {
    clearTimeout(timer);
    socket.off("data", onData);
    socket.off("close", onClose);
    socket.pause();
    if (buffered.length > 0) socket.unshift(buffered);
    next(socket, protocol);
  };
  const onData = (data: Buffer) => {
    buffered = buffered.length === 0 ? data : Buffer.concat([buffered, data]);
    const match = prefaceMatch(buffered);
    if (match !== "more") decide(match);
  };
  const onClose = () => clearTimeout(timer);
  const timer = setTimeout(() => decide("http1"), timeoutMs).unref();
  socket.on("data", onData);
  socket.once("close", onClose);
}

/** The tokens of a list field value (Upgrade, Connection), trimmed, lower case, none empty. */
function tokensOf(value: string): string[] {
  return value
    .split(",")
    .map(token => token.trim().toLowerCase())
    .filter(token => token !== "");
}

/** A net.Socket's libuv handle, which node:http2 reads directly once a session is made on it. */
type ReadingHandle = { reading: boolean; readStart(): number; readStop(): number };

const handleOf = (socket: Socket) => (socket as Socket & { _handle?: ReadingHandle })._handle;

/**
 * Gives a sniffed socket (paused, its first bytes put back) to an h2 session. The session reads
 * the socket's handle itself from its creation but takes the bytes put back only on its next
 * tick, so the handle is stopped meanwhile (bytes read in between would reach it before the
 * preface), and started again after that tick: it may have been stopped by the stream's own
 * backpressure too, which nothing else would undo.
 */
export function handToH2(socket: Socket, accept: (socket: Socket) => void): void {
  const handle = handleOf(socket);
  if (handle?.reading === true) {
    handle.reading = false;
    handle.readStop();
  }
  accept(socket);
  process.nextTick(() => {
    if (socket.destroyed || handle === undefined || handle.reading) return;
    handle.reading = true;
    handle.readStart();
  });
}

/** An Upgrade field value asks for h2c and nothing else: the request is served as plain HTTP/1.1. */
export function asksOnlyH2c(upgrade: string | undefined): boolean {
  if (upgrade === undefined) return false;
  const tokens = tokensOf(upgrade);
  return tokens.length > 0 && tokens.every(token => token === "h2c");
}

/**
 * The request's head without the h2c upgrade, as HTTP/1.1 text (Node's raw fields, which its
 * parser checked): no Upgrade, no HTTP2-Settings, and Connection without the tokens naming them
 * (dropped when none is left). Node's server reads it again as an ordinary request.
 */
export function headWithoutH2cUpgrade(requestLine: string, raw: readonly string[]): string {
  let head = `${requestLine}\r\n`;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    const lower = name.toLowerCase();
    if (lower === "upgrade" || lower === "http2-settings") continue;
    let value = raw[i + 1]!;
    if (lower === "connection") {
      const kept = tokensOf(value).filter(t => t !== "upgrade" && t !== "http2-settings");
      if (kept.length === 0) continue;
      value = kept.join(", ");
    }
    head += `${name}: ${value}\r\n`;
  }
  return `${head}\r\n`;
}
