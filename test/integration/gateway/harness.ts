// What the gateway's integration tests share: real backend HTTP servers, the objects that route
// to them (Ingress, a one-port EndpointSlice naming this machine's address), gateway processes on free ports,
// and plain HTTP/TLS clients that name the host.
import type { KubeConfig, KubernetesObject } from "@kubernetes/client-node";
import { createServer, request, type Server } from "node:http";
import { connect, type TLSSocket } from "node:tls";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { applyOrThrow } from "../../../hack/control-plane/kube";
import { waitUntil } from "../../harness/wait";
import type { ManagedProcess } from "../../../hack/control-plane/processes";
import {
  ingressClass,
  machineAddress,
  startGatewayProcess,
  waitReady,
} from "../../../hack/local-stack/gateway";

/** This machine's address, where local backends listen (see machineAddress). */
export const localAddress = machineAddress;

export interface Backend {
  name: string;
  port: number;
  close(): Promise<void>;
}

/** An HTTP server answering `<name> <path>`; `?ms=N` answers after N ms. */
export async function startBackend(name: string): Promise<Backend> {
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://backend");
    const delay = Number(url.searchParams.get("ms") ?? 0);
    const body = `${name} ${url.pathname}`;
    const headers = { "content-type": "text/plain", "content-length": Buffer.byteLength(body) };
    setTimeout(() => res.writeHead(200, headers).end(body), delay);
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>(resolve => server.listen(0, localAddress(), resolve));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    name,
    port,
    close: () =>
      new Promise<void>(resolve => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function ingress(
  namespace: string,
  name: string,
  rule: {
    host: string;
    service: string;
    path?: string;
    tlsSecrets?: string[];
    annotations?: Record<string, string>;
  },
): KubernetesObject {
  return {
    apiVersion: "networking.k8s.io/v1",
    kind: "Ingress",
    metadata: { name, namespace, annotations: rule.annotations ?? {} },
    spec: {
      ingressClassName: "bulwark",
      rules: [
        {
          host: rule.host,
          http: {
            paths: [
              {
                path: rule.path ?? "/",
                pathType: "Prefix",
                backend: { service: { name: rule.service, port: { number: 80 } } },
              },
            ],
          },
        },
      ],
      ...(rule.tlsSecrets
        ? { tls: rule.tlsSecrets.map(secretName => ({ hosts: [rule.host], secretName })) }
        : {}),
    },
  } as KubernetesObject;
}

/** An EndpointSlice of Service `service` with one ready endpoint on this machine (localAddress). */
export function endpointSlice(namespace: string, service: string, port: number): KubernetesObject {
  return {
    apiVersion: "discovery.k8s.io/v1",
    kind: "EndpointSlice",
    metadata: {
      name: `${service}-local`,
      namespace,
      labels: { "kubernetes.io/service-name": service },
    },
    addressType: "IPv4",
    endpoints: [{ addresses: [localAddress()], conditions: { ready: true } }],
    ports: [{ name: "http", port, protocol: "TCP" }],
  } as KubernetesObject;
}

/** IngressClass bulwark, marked the cluster's default or not (other tests share it: reset it). */
export function defaultIngressClass(isDefault: boolean): KubernetesObject {
  const object = ingressClass() as KubernetesObject;
  object.metadata = {
    ...object.metadata,
    annotations: { "ingressclass.kubernetes.io/is-default-class": String(isDefault) },
  };
  return object;
}

export async function ensureIngressClass(kc: KubeConfig): Promise<void> {
  await applyOrThrow(kc, [ingressClass()]);
}

export interface RunningGateway {
  podName: string;
  httpPort: number;
  httpsPort: number;
  adminPort: number;
  stateDir: string;
  process: ManagedProcess;
  health(): Promise<Health>;
  stop(): Promise<void>;
}

export interface Health {
  ready: boolean;
  view?: { version: number; from: string; ingresses: number; tlsPairs: number };
  guard: Record<
    string,
    {
      mode: string;
      state: string;
      wouldRefuse?: string;
      accepted: boolean;
      refusal?: string;
      refusedUpdates: number;
      ignored?: { name: string; reason: string; message: string }[];
    }
  >;
  apiServer?: { reachable: boolean; lastError?: string };
  rollout: { held: { ingress: Record<string, string> } };
}

export async function startGateway(options: {
  kubeconfigPath: string;
  namespace: string;
  podName?: string;
  stateDir?: string;
  env?: NodeJS.ProcessEnv;
  waitReady?: boolean;
}): Promise<RunningGateway> {
  const podName = options.podName ?? "bulwark-gateway-0";
  const stateDir = options.stateDir ?? mkdtempSync(join(tmpdir(), `${podName}-`));
  const logFile = join(stateDir, `gateway-${Date.now()}.log`);
  // Port 0 everywhere: the gateway binds free ports itself and logs them, so no port picked
  // here can be taken by someone else before the gateway binds it.
  const gateway = startGatewayProcess({
    kubeconfigPath: options.kubeconfigPath,
    podName,
    stateDir,
    logFile,
    env: {
      LOG_LEVEL: "info",
      BULWARK_WATCH_NAMESPACES: options.namespace,
      BULWARK_HTTP_PORT: "0",
      BULWARK_HTTPS_PORT: "0",
      BULWARK_ADMIN_PORT: "0",
      BULWARK_DRAIN_SECONDS: "2",
      ...options.env,
    },
  });
  const { httpPort, httpsPort, adminPort } = await boundPorts(gateway);
  const admin = `http://127.0.0.1:${adminPort}`;
  if (options.waitReady ?? true) await waitReady(`${admin}/readyz`, gateway);
  return {
    podName,
    httpPort,
    httpsPort,
    adminPort,
    stateDir,
    process: gateway,
    health: async () => (await (await fetch(`${admin}/healthz`)).json()) as Health,
    stop: () => gateway.stop(10_000),
  };
}

interface Ports {
  httpPort: number;
  httpsPort: number;
  adminPort: number;
}

/** The ports from the gateway's "gateway started" log line. */
async function boundPorts(gateway: ManagedProcess): Promise<Ports> {
  let exited: number | string | undefined;
  void gateway.exited.then(code => (exited = code));
  return waitUntil(`${gateway.name} to start`, async () => {
    const log = existsSync(gateway.logFile) ? readFileSync(gateway.logFile, "utf8") : "";
    if (exited !== undefined)
      throw new Error(`${gateway.name} exited (${exited}):\n${log.slice(-2000)}`);
    const line = log.split("\n").find(l => l.includes('"gateway started"'));
    return line ? (JSON.parse(line) as Ports) : undefined;
  });
}

export interface Reply {
  status: number;
  body: string;
}

/** One HTTP request to the gateway naming `host`. */
export function get(
  port: number,
  host: string,
  path = "/",
  options: { timeoutMs?: number; headers?: Record<string, string> } | number = {},
): Promise<Reply> {
  const { timeoutMs = 10_000, headers = {} } =
    typeof options === "number" ? { timeoutMs: options } : options;
  return new Promise((resolve, reject) => {
    const req = request(
      { host: "127.0.0.1", port, path, headers: { ...headers, host }, timeout: timeoutMs },
      res => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => (body += chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
        res.on("error", reject);
      },
    );
    req.on("timeout", () => req.destroy(new Error(`GET ${host}${path}: timed out`)));
    req.on("error", reject);
    req.end();
  });
}

/** Waits until `host` (at `path`) answers 200 with a body starting with `prefix`. */
export async function waitServed(
  port: number,
  host: string,
  prefix: string,
  options: { path?: string; timeoutMs?: number } = {},
): Promise<Reply> {
  return waitUntil(
    `${host} to be served by ${prefix}`,
    async () => {
      const reply = await get(port, host, options.path ?? "/");
      return reply.status === 200 && reply.body.startsWith(prefix) ? reply : undefined;
    },
    options.timeoutMs ?? 30_000,
    100,
  );
}

/** A TLS handshake with SNI `host`, offering only `key` type certificates; resolves with the socket. */
export function handshake(port: number, host: string, key: "ecdsa" | "rsa"): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    const socket = connect({
      host: "127.0.0.1",
      port,
      servername: host,
      rejectUnauthorized: false,
      maxVersion: "TLSv1.2",
      ciphers: key === "ecdsa" ? "ECDHE-ECDSA-AES128-GCM-SHA256" : "ECDHE-RSA-AES128-GCM-SHA256",
      sigalgs: key === "ecdsa" ? "ecdsa_secp256r1_sha256" : "rsa_pss_rsae_sha256:rsa_pkcs1_sha256",
    });
    socket.once("secureConnect", () => resolve(socket));
    socket.once("error", reject);
  });
}

/** The key type of the certificate the server presented: "ec" or "rsa". */
export function keyType(socket: TLSSocket): string {
  const cert = socket.getPeerCertificate();
  if (cert.asn1Curve) return "ec";
  return cert.modulus ? "rsa" : "none";
}

/** The SHA-256 fingerprint of the certificate the server presented. */
export function peerFingerprint(socket: TLSSocket): string {
  return socket.getPeerCertificate().fingerprint256;
}

/** Sends one HTTP/1.1 request over an open TLS socket (keep-alive) and reads the reply. */
export function getOver(socket: TLSSocket, host: string, path = "/"): Promise<Reply> {
  return new Promise((resolve, reject) => {
    let text = "";
    const onData = (chunk: Buffer): void => {
      text += chunk.toString("utf8");
      const split = text.indexOf("\r\n\r\n");
      if (split < 0) return;
      const head = text.slice(0, split);
      const length = Number(/content-length:\s*(\d+)/i.exec(head)?.[1] ?? -1);
      const body = text.slice(split + 4);
      if (length < 0 || Buffer.byteLength(body) < length) return;
      socket.off("data", onData);
      resolve({ status: Number(head.split(" ")[1]), body });
    };
    socket.on("data", onData);
    socket.once("error", reject);
    socket.write(`GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: keep-alive\r\n\r\n`);
  });
}
