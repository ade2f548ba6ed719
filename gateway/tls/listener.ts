// The HTTPS listener's handshakes: each connection's ClientHello is read first, the host's
// certificate for what the client offers is picked, the handshake runs with that context, and the
// decrypted socket goes to the HTTPS server's HTTP side as if the server had made it, or, when
// the client chose ALPN "h2" among what this host is offered, to the HTTP/2 side.
import type { Socket } from "node:net";
import { TLSSocket, type Server as TlsServer } from "node:tls";
import { MAX_HELLO_BYTES, readClientHello, type ClientHello } from "./client-hello";
import { sharePeerAddress } from "../proxy/proxy-protocol";
import type { CertificateStore } from "./store";

/** A client that sends no complete ClientHello, or no finished handshake, in this time is dropped. */
const HANDSHAKE_TIMEOUT_MS = 10_000;

const ANY_CLIENT: ClientHello = { serverName: undefined, acceptsEcdsa: true, acceptsRsa: true };

/** HTTP/2 beside HTTP/1.1 on the same listener (proxy/h2/front.ts). */
export interface H2Side {
  /** Whether a client asking for this SNI name (undefined: none) is offered "h2". */
  offers(serverName: string | undefined): boolean;
  /** Serves a socket whose handshake chose "h2". */
  accept(socket: TLSSocket): void;
}

const H1_ONLY = ["http/1.1"];
// Server preference: h2 first, as nginx's and browsers' order.
const H2_AND_H1 = ["h2", "http/1.1"];

/** Where a socket goes once its handshake is done, and what HTTP/2 side offers "h2". */
interface Handoff {
  onSecure: (socket: TLSSocket) => void;
  h2: H2Side | undefined;
}

function startTls(
  raw: Socket,
  hello: ClientHello,
  store: CertificateStore,
  handoff: Handoff,
): void {
  const { onSecure, h2 } = handoff;
  const secureContext = store.contextFor(hello);
  if (secureContext === undefined) {
    raw.destroy();
    return;
  }
  const ALPNProtocols = h2?.offers(hello.serverName) === true ? H2_AND_H1 : H1_ONLY;
  const socket = new TLSSocket(raw, { isServer: true, secureContext, ALPNProtocols });
  sharePeerAddress(raw, socket);
  const timer = setTimeout(() => socket.destroy(), HANDSHAKE_TIMEOUT_MS).unref();
  socket.once("close", () => clearTimeout(timer));
  const onError = () => {
    clearTimeout(timer);
    socket.destroy();
  };
  socket.once("error", onError);
  socket.once("secure", () => {
    clearTimeout(timer);
    socket.off("error", onError);
    onSecure(socket);
  });
}

function onConnection(raw: Socket, store: CertificateStore, handoff: Handoff): void {
  let buffered = Buffer.alloc(0);
  const timer = setTimeout(() => raw.destroy(), HANDSHAKE_TIMEOUT_MS).unref();
  raw.once("close", () => clearTimeout(timer));
  const finish = (hello: ClientHello) => {
    clearTimeout(timer);
    raw.off("data", onData);
    raw.off("error", onError);
    raw.pause();
    raw.unshift(buffered);
    startTls(raw, hello, store, handoff);
  };
  const onData = (data: Buffer) => {
    buffered = buffered.length === 0 ? data : Buffer.concat([buffered, data]);
    const read = readClientHello(buffered);
    if (read.state === "complete") finish(read.hello);
    else if (read.state === "not-tls" || buffered.length > MAX_HELLO_BYTES) finish(ANY_CLIENT);
  };
  const onError = () => {
    clearTimeout(timer);
    raw.destroy();
  };
  raw.on("data", onData);
  raw.on("error", onError);
}

/**
 * Replaces a tls.Server's own handshake (one context per SNI callback) with ours; the server keeps
 * listening, tracking and closing its connections as before.
 */
export function chooseCertificatePerClient(
  server: TlsServer,
  store: CertificateStore,
  h2?: H2Side,
): void {
  const onSecure = (socket: TLSSocket) => {
    if (h2 !== undefined && socket.alpnProtocol === "h2") h2.accept(socket);
    else server.emit("secureConnection", socket);
  };
  server.removeAllListeners("connection");
  server.on("connection", (raw: Socket) => onConnection(raw, store, { onSecure, h2 }));
}
