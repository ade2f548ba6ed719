// The PROXY protocol (HAProxy's, versions 1 and 2), as cloud load balancers send it in front of a
// TCP listener: with BULWARK_PROXY_PROTOCOL on, every connection must begin with the header, whose
// source address then stands for the TCP peer (trusted proxies, source ranges, X-Forwarded-For,
// the log). A connection without a valid header is closed, as nginx's `listen … proxy_protocol`
// closes on a broken header. A LOCAL command (the balancer's own health check) or an UNKNOWN or
// unspecified family keeps the real peer.
import type { Socket } from "node:net";
import { formatIp } from "../../core/net/ip";

/** Version 2's fixed signature. */
const V2_SIGNATURE = Buffer.from([
  0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a,
]);
/** Version 1's longest line, CRLF included (the specification's 107 bytes). */
const V1_MAX = 107;
/** The largest version-2 header read (16-byte head + addresses + TLVs we skip). */
const V2_MAX = 16 + 1024;

export type ProxyHeader =
  | { state: "incomplete" }
  | { state: "invalid"; reason: string }
  /** `source`: the client's address; undefined to keep the TCP peer (LOCAL, UNKNOWN). */
  | { state: "complete"; length: number; source: string | undefined };

const INCOMPLETE: ProxyHeader = { state: "incomplete" };
const invalid = (reason: string): ProxyHeader => ({ state: "invalid", reason });

const V4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;
const PORT = /^(0|[1-9]\d{0,4})$/;

function v1Address(family: string, text: string): boolean {
  if (family === "TCP4") return V4.test(text);
  // An IPv6 address as text: hex groups and colons, an IPv4 tail allowed; Node re-reads it.
  return /^[0-9A-Fa-f:.]{2,45}$/.test(text) && text.includes(":");
}

const V1_FAMILIES = new Set(["TCP4", "TCP6"]);

const isPort = (text: string): boolean => PORT.test(text) && Number(text) <= 65535;

/** "PROXY TCP4|TCP6 <source> <destination> <source port> <destination port>". */
function wellFormedV1(fields: readonly string[]): boolean {
  const [, family = "", source = "", target = "", sourcePort = "", targetPort = ""] = fields;
  if (fields.length !== 6 || !V1_FAMILIES.has(family)) return false;
  const addresses = v1Address(family, source) && v1Address(family, target);
  return addresses && isPort(sourcePort) && isPort(targetPort);
}

function parseV1(data: Buffer): ProxyHeader {
  const end = data.indexOf("\r\n", 0, "latin1");
  const tooLong = invalid("v1 line longer than 107 bytes");
  if (end < 0) return data.length >= V1_MAX ? tooLong : INCOMPLETE;
  if (end + 2 > V1_MAX) return tooLong;
  const fields = data.toString("latin1", 0, end).split(" ");
  const length = end + 2;
  if (fields[1] === "UNKNOWN") return { state: "complete", length, source: undefined };
  if (!wellFormedV1(fields)) return invalid("malformed v1 line");
  return { state: "complete", length, source: fields[2] };
}

/** A PROXY command's source: TCP over IPv4 or IPv6; other families keep the peer. */
function v2Source(data: Buffer, family: number, length: number): ProxyHeader {
  const sizes: Record<number, [number, number]> = { 0x11: [12, 4], 0x21: [36, 16] };
  const size = sizes[family];
  if (size === undefined) return { state: "complete", length, source: undefined };
  if (length < 16 + size[0]) return invalid("v2 addresses shorter than their family");
  return { state: "complete", length, source: formatIp(data.subarray(16, 16 + size[1])) };
}

function parseV2(data: Buffer): ProxyHeader {
  if (data.length < 16) return INCOMPLETE;
  const versionCommand = data[12]!;
  if (versionCommand >> 4 !== 2) return invalid(`v2 version ${versionCommand >> 4}`);
  const command = versionCommand & 0x0f;
  if (command > 1) return invalid(`v2 command ${command}`);
  const length = 16 + data.readUInt16BE(14);
  if (length > V2_MAX) return invalid(`v2 header of ${length} bytes`);
  if (data.length < length) return INCOMPLETE;
  if (command === 0) return { state: "complete", length, source: undefined };
  return v2Source(data, data[13]!, length);
}

/** The header at the start of `data`, as far as it has come. */
export function readProxyHeader(data: Buffer): ProxyHeader {
  const head = Math.min(data.length, V2_SIGNATURE.length);
  if (data.subarray(0, head).equals(V2_SIGNATURE.subarray(0, head))) {
    return head < V2_SIGNATURE.length ? INCOMPLETE : parseV2(data);
  }
  const v1 = "PROXY ";
  const prefix = data.toString("latin1", 0, Math.min(data.length, v1.length));
  if (!v1.startsWith(prefix)) return invalid("no PROXY protocol header");
  return prefix.length < v1.length ? INCOMPLETE : parseV1(data);
}

/** Sources read from PROXY headers, by socket (raw, and the TLS socket made over it). */
const SOURCES = new WeakMap<object, string>();

/** The client's address: the PROXY header's source when there was one, else the TCP peer's. */
export function peerAddressOf(socket: { remoteAddress?: string | undefined }): string | undefined {
  return SOURCES.get(socket) ?? socket.remoteAddress;
}

/** A socket made over `raw` (a TLS socket) has the same client. */
export function sharePeerAddress(raw: object, over: object): void {
  const source = SOURCES.get(raw);
  if (source !== undefined) SOURCES.set(over, source);
}

/**
 * Reads the header off a new connection, then hands the socket (the bytes after the header put
 * back) to `next`; closes it on a bad header or when none has come within `timeoutMs`.
 */
export function acceptProxyHeader(
  socket: Socket,
  timeoutMs: number,
  next: (socket: Socket) => void,
  onRefused: (reason: string) => void,
): void {
  let buffered = Buffer.alloc(0);
  const timer = setTimeout(() => refuse("no header in time"), timeoutMs).unref();
  const done = () => {
    clearTimeout(timer);
    socket.off("data", onData);
    socket.off("error", onError);
  };
  const refuse = (reason: string) => {
    done();
    onRefused(reason);
    socket.destroy();
  };
  const onData = (data: Buffer) => {
    buffered = buffered.length === 0 ? data : Buffer.concat([buffered, data]);
    const header = readProxyHeader(buffered);
    if (header.state === "incomplete") return;
    if (header.state === "invalid") return refuse(header.reason);
    done();
    socket.pause();
    if (header.source !== undefined) SOURCES.set(socket, header.source);
    if (buffered.length > header.length) socket.unshift(buffered.subarray(header.length));
    next(socket);
    // The next reader has its listeners now: let the put-back bytes and the rest flow to them.
    socket.resume();
  };
  const onError = () => {
    done();
    socket.destroy();
  };
  socket.on("data", onData);
  socket.on("error", onError);
}
