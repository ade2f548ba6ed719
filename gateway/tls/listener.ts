// The HTTPS listener's handshakes: each connection's ClientHello is read first, the host's
// certificate for what the client offers is picked, the handshake runs with that context, and the
// decrypted socket goes to the HTTPS server's HTTP side as if the server had made it.
import type { Socket } from "node:net";
import { TLSSocket, type Server as TlsServer } from "node:tls";
import { MAX_HELLO_BYTES, readClientHello, type ClientHello } from "./client-hello";
import { sharePeerAddress } from "../proxy/proxy-protocol";
import type { CertificateStore } from "./store";

/** A client that sends no complete ClientHello, or no finished handshake, in this time is dropped. */
const HANDSHAKE_TIMEOUT_MS = 10_000;

const ANY_CLIENT: ClientHello = { serverName: undefined, acceptsEcdsa: true, acceptsRsa: true };

function startTls(
  raw: Socket,
  hello: ClientHello,
  store: CertificateStore,
  onSecure: (socket: TLSSocket) => void,
): void {
  const secureContext = store.contextFor(hello);
  if (secureContext === undefined) {
    raw.destroy();
    return;
  }
  const socket = new TLSSocket(raw, { isServer: true, secureContext, ALPNProtocols: ["http/1.1"] });
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

function onConnection(
  raw: Socket,
  store: CertificateStore,
  onSecure: (socket: TLSSocket) => void,
): void {
  let buffered = Buffer.alloc(0);
  const timer = setTimeout(() => raw.destroy(), HANDSHAKE_TIMEOUT_MS).unref();
  raw.once("close", () => clearTimeout(timer));
  const finish = (hello: ClientHello) => {
    clearTimeout(timer);
    raw.off("data", onData);
    raw.off("error", onError);
    raw.pause();
    raw.unshift(buffered);
    startTls(raw, hello, store, onSecure);
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
export function chooseCertificatePerClient(server: TlsServer, store: CertificateStore): void {
  server.removeAllListeners("connection");
  server.on("connection", (raw: Socket) =>
    onConnection(raw, store, socket => server.emit("secureConnection", socket)),
  );
}
