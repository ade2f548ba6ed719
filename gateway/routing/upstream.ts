// A route's upstream settings, compiled once per table from the upstream annotations and the
// proxy-ssl-secret: the TLS options both request paths connect with, the identity that keeps
// their pooled connections apart, and the request header edits (upstream-vhost,
// x-forwarded-prefix). Pure apart from building a TLS secure context.
import { createHash } from "node:crypto";
import {
  checkServerIdentity,
  createSecureContext,
  type ConnectionOptions,
  type PeerCertificate,
} from "node:tls";
import type { UpstreamConfig, UpstreamSsl } from "../../core/annotations";
import { annotationKey } from "../../core/annotations/validators";
import type { HeaderEdits, HeaderPair } from "../policy/head-edits";
import { isConnectFailure, isUpstreamTimeout } from "../proxy/retry-rules";
import type { TlsPair } from "../view";

/** TLS towards the backend: the options to connect with, and their identity for pool keys. */
export interface UpstreamTls {
  /** A digest of every setting and of the Secret's content: equal ids may share a connection. */
  readonly id: string;
  /** The name checked against the backend's certificate (verify on), for logs. */
  readonly name: string | undefined;
  readonly verify: boolean;
  readonly options: ConnectionOptions;
}

/** A route's upstream settings; RoutePolicy.upstream is undefined for plain HTTP without edits. */
export interface UpstreamPolicy {
  /** undefined: plain HTTP. */
  readonly tls: UpstreamTls | undefined;
  /** AUTO_HTTP: TLS only for requests that came over HTTPS (ingress-nginx's `$scheme://`). */
  readonly tlsOnlyForHttps: boolean;
  /** Host (upstream-vhost) and X-Forwarded-Prefix; undefined for none. */
  readonly requestEdits: HeaderEdits | undefined;
  /** backend-protocol GRPC or GRPCS: calls go over HTTP/2 (grpc/sessions.ts). */
  readonly grpc: boolean;
}

/** The TLS a request on this policy connects with (undefined: plain HTTP). */
export function upstreamTlsFor(
  upstream: UpstreamPolicy | undefined,
  https: boolean,
): UpstreamTls | undefined {
  if (upstream === undefined) return undefined;
  return upstream.tlsOnlyForHttps && !https ? undefined : upstream.tls;
}

/** The pool key of a connection to `endpointKey`: TLS connections carry their identity. */
export function poolKey(endpointKey: string, tls: UpstreamTls | undefined): string {
  return tls === undefined ? endpointKey : `${endpointKey}|${tls.id}`;
}

export type UpstreamOutcome =
  | { ok: true; upstream: UpstreamPolicy | undefined }
  | { ok: false; refusal: string };

interface UpstreamInputs {
  config: UpstreamConfig;
  /** The Ingress's namespace: proxy-ssl-secret may only name a Secret there (ingress-nginx's default). */
  namespace: string;
  /** Whether a rewrite-target applies: ingress-nginx sends X-Forwarded-Prefix only with one. */
  rewrites: boolean;
  /** The view's TLS Secrets by namespace/name. */
  pairs: ReadonlyMap<string, TlsPair>;
}

const SECRET_KEY = annotationKey("proxy-ssl-secret");

/** The route's upstream policy, or why the route must answer 503 instead (fail closed). */
export function compileUpstream(inputs: UpstreamInputs): UpstreamOutcome {
  const { config } = inputs;
  const requestEdits = requestEditsOf(config, inputs.rewrites);
  if (config.protocol === "HTTP" || config.protocol === "GRPC") {
    const grpc = config.protocol === "GRPC";
    const plain = { tls: undefined, tlsOnlyForHttps: false, requestEdits, grpc };
    return { ok: true, upstream: grpc || requestEdits !== undefined ? plain : undefined };
  }
  const pair = secretPair(config.ssl, inputs);
  if (typeof pair === "string") return { ok: false, refusal: pair };
  let tls: UpstreamTls;
  try {
    tls = upstreamTls(config.ssl, pair);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    return {
      ok: false,
      refusal: `${SECRET_KEY}: Secret ${secretName(config.ssl)} cannot be used: ${why}`,
    };
  }
  return {
    ok: true,
    upstream: {
      tls,
      tlsOnlyForHttps: config.protocol === "AUTO_HTTP",
      requestEdits,
      grpc: config.protocol === "GRPCS",
    },
  };
}

function secretName(ssl: UpstreamSsl): string {
  return `${ssl.secret?.namespace ?? ""}/${ssl.secret?.name ?? ""}`;
}

/** The Secret's pair; a string says why it cannot be had; undefined when none is named. */
function secretPair(ssl: UpstreamSsl, inputs: UpstreamInputs): TlsPair | undefined | string {
  if (ssl.secret === undefined) return undefined;
  const name = secretName(ssl);
  if (ssl.secret.namespace !== inputs.namespace) {
    return `${SECRET_KEY}: Secret ${name} is in another namespace than the Ingress (cross-namespace Secrets are refused, as ingress-nginx does by default)`;
  }
  const pair = inputs.pairs.get(name);
  if (pair === undefined) {
    return `${SECRET_KEY}: Secret ${name} not found (or not of type kubernetes.io/tls)`;
  }
  if (pair.ca === undefined && pair.cert === "") {
    return `${SECRET_KEY}: Secret ${name} has neither tls.crt/tls.key nor ca.crt`;
  }
  if (ssl.verify && pair.ca === undefined) {
    return `${SECRET_KEY}: Secret ${name} has no ca.crt to verify the backend with (proxy-ssl-verify is "on")`;
  }
  return pair;
}

function requestEditsOf(config: UpstreamConfig, rewrites: boolean): HeaderEdits | undefined {
  const set: HeaderPair[] = [];
  if (config.vhost !== undefined) set.push(["Host", config.vhost]);
  if (config.forwardedPrefix !== undefined && rewrites)
    set.push(["X-Forwarded-Prefix", config.forwardedPrefix]);
  return set.length === 0 ? undefined : { set, add: [] };
}

/** Throws when the Secret's PEM does not load (a bad key, a key that does not match). */
function upstreamTls(ssl: UpstreamSsl, pair: TlsPair | undefined): UpstreamTls {
  // A pair's cert and key are both set or both "" (compose.ts).
  const cert = pair?.cert || undefined;
  const key = pair?.key || undefined;
  const ca = ssl.verify ? pair?.ca : undefined;
  const protocols = ssl.protocols;
  const secureContext = createSecureContext({
    ca,
    cert,
    key,
    minVersion: protocols[0],
    maxVersion: protocols[protocols.length - 1],
    ciphers: ssl.ciphers,
  });
  const identity = JSON.stringify([ssl, ca, cert, key]);
  return {
    id: createHash("sha256").update(identity).digest("hex").slice(0, 16),
    name: ssl.name,
    verify: ssl.verify,
    options: {
      secureContext,
      // "": no SNI (nginx's proxy_ssl_server_name off); Node would otherwise send the Host.
      servername: ssl.serverName && ssl.name !== undefined ? ssl.name : "",
      rejectUnauthorized: ssl.verify,
      checkServerIdentity: ssl.verify ? identityCheck(ssl.name ?? "", ssl.verifyDepth) : noCheck,
    },
  };
}

const noCheck = (): undefined => undefined;

/**
 * The certificate must name `name` (nginx's proxy_ssl_name, whatever SNI was sent), and its chain
 * hold at most `depth` intermediate CAs between it and the trust anchor (proxy_ssl_verify_depth).
 */
function identityCheck(name: string, depth: number) {
  return (_host: string, cert: PeerCertificate): Error | undefined => {
    const chain = chainLength(cert);
    if (chain > depth + 2) {
      return new Error(
        `the backend's certificate chain has ${chain - 2} intermediate CAs; proxy-ssl-verify-depth allows ${depth}`,
      );
    }
    return checkServerIdentity(name, cert);
  };
}

/** Certificates from the leaf to the self-issued anchor, as Node gives the verified chain. */
export function chainLength(cert: PeerCertificate): number {
  let count = 1;
  let current = cert as PeerCertificate & { issuerCertificate?: PeerCertificate };
  while (current.issuerCertificate !== undefined && current.issuerCertificate !== current) {
    count++;
    current = current.issuerCertificate as typeof current;
    if (count > 100) break;
  }
  return count;
}

const REPORT_INTERVAL_MS = 10_000;
const lastReported = new Map<string, number>();

/**
 * Logs a failed upstream TLS handshake (one JSON line on stderr), at most once per endpoint,
 * name and reason every 10 s, so a broken backend cannot flood the log.
 */
export function reportTlsFailure(endpointKey: string, tls: UpstreamTls, error: Error): void {
  const code = (error as Error & { code?: string }).code ?? "";
  // Not reaching the backend at all is no TLS failure.
  if (isConnectFailure(code) || isUpstreamTimeout(code)) return;
  const key = `${endpointKey} ${tls.id} ${code}`;
  const now = Date.now();
  if ((lastReported.get(key) ?? 0) + REPORT_INTERVAL_MS > now) return;
  if (lastReported.size > 1000) lastReported.clear();
  lastReported.set(key, now);
  const line = {
    level: "warn",
    time: new Date(now).toISOString(),
    component: "gateway",
    msg: "upstream TLS handshake failed (502)",
    endpoint: endpointKey,
    verify: tls.verify,
    name: tls.name,
    code,
    reason: error.message,
  };
  process.stderr.write(`${JSON.stringify(line)}\n`);
}
