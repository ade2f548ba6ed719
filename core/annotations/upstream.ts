// ingress-nginx's upstream protocol and TLS annotations (backendprotocol, proxyssl, upstreamvhost,
// xforwardedprefix): how the gateway talks to the backend. Values are read as ingress-nginx reads
// them (backend-protocol case-insensitive, on/off words for proxy-ssl-verify and
// proxy-ssl-server-name, TLSv1.2/TLSv1.3 only), but a wrong value is refused instead of being
// replaced by a default, and settings that could only fail (verify with no name to check) are
// refused at admission.
import { createSecureContext } from "node:tls";
import { z } from "zod";
import { keyOf, parseFamily, type Family } from "./family";
import { annotation, bad, good, parseIntIn, quote, type Parsed } from "./validators";
import type { Result } from "../result";

const fields = {
  protocol: {
    annotation: "backend-protocol",
    type: '"HTTP", "HTTPS", "AUTO_HTTP", "GRPC" or "GRPCS"',
    default: "HTTP",
    doc: 'How the backend is spoken to: "HTTP", "HTTPS" (TLS), "AUTO_HTTP" (TLS for requests that came over HTTPS), "GRPC" (HTTP/2 without TLS) or "GRPCS" (HTTP/2 over TLS, with the proxy-ssl-* settings); any case. gRPC routes serve HTTP/2 clients. FCGI is refused.',
  },
  sslSecret: {
    annotation: "proxy-ssl-secret",
    type: '"namespace/name"',
    default: "",
    doc: "A kubernetes.io/tls Secret of the Ingress's namespace: tls.crt and tls.key, the client certificate shown to the HTTPS backend, and ca.crt, the CAs its certificate is verified against. Missing, the route answers 503.",
  },
  sslVerify: {
    annotation: "proxy-ssl-verify",
    type: '"on" or "off"',
    default: "off",
    doc: 'Verify the HTTPS backend\'s certificate (against ca.crt, or the public CAs without a proxy-ssl-secret) and that it names proxy-ssl-name; "on" needs proxy-ssl-name. Failures answer 502.',
  },
  sslVerifyDepth: {
    annotation: "proxy-ssl-verify-depth",
    type: "integer",
    default: "1",
    doc: "How many intermediate CA certificates the backend's chain may have, as nginx's proxy_ssl_verify_depth (default 1).",
  },
  sslName: {
    annotation: "proxy-ssl-name",
    type: "host name",
    default: "",
    doc: "The name the backend's certificate must carry, and the SNI name sent when proxy-ssl-server-name is on.",
  },
  sslServerName: {
    annotation: "proxy-ssl-server-name",
    type: '"on" or "off"',
    default: "off",
    doc: 'Send proxy-ssl-name as the TLS server name (SNI) to the backend; "on" needs proxy-ssl-name.',
  },
  sslProtocols: {
    annotation: "proxy-ssl-protocols",
    type: '"TLSv1.2", "TLSv1.3" separated by spaces',
    default: "TLSv1.2 TLSv1.3",
    doc: "The TLS versions offered to the backend (default TLSv1.2 TLSv1.3).",
  },
  sslCiphers: {
    annotation: "proxy-ssl-ciphers",
    type: "OpenSSL cipher list",
    default: "Node's default",
    doc: 'The ciphers offered to the backend, in OpenSSL\'s format ("ECDHE-RSA-AES128-GCM-SHA256:!aNULL"); checked against the ciphers Node has.',
  },
  vhost: {
    annotation: "upstream-vhost",
    type: "host name",
    default: "the request's Host",
    doc: "The Host header sent to the backend instead of the request's.",
  },
  forwardedPrefix: {
    annotation: "x-forwarded-prefix",
    type: "path",
    default: "",
    doc: 'Adds X-Forwarded-Prefix with this value to requests a rewrite-target rewrites (as ingress-nginx, only with rewrite-target); "" adds none.',
  },
} as const;

export type BackendProtocol = "HTTP" | "HTTPS" | "AUTO_HTTP" | "GRPC" | "GRPCS";
export type TlsVersion = "TLSv1.2" | "TLSv1.3";

/** ingress-nginx's proxy-ssl-verify-depth default (and nginx's proxy_ssl_verify_depth). */
export const DEFAULT_VERIFY_DEPTH = 1;
export const DEFAULT_PROXY_SSL_PROTOCOLS: readonly TlsVersion[] = ["TLSv1.2", "TLSv1.3"];
// OpenSSL's own limit on a verified chain; a larger depth is a typo.
const MAX_VERIFY_DEPTH = 100;

const PROTOCOL_EXPECTED = '"HTTP", "HTTPS", "AUTO_HTTP", "GRPC" or "GRPCS"';
const PROTOCOLS: ReadonlySet<string> = new Set(["HTTP", "HTTPS", "AUTO_HTTP", "GRPC", "GRPCS"]);

/** backend-protocol: trimmed and case-insensitive, as ingress-nginx's ValidateOptions reads it. */
export function parseBackendProtocol(raw: string): Parsed<BackendProtocol> {
  const word = raw.trim().toUpperCase();
  if (PROTOCOLS.has(word)) return good(word as BackendProtocol);
  if (word === "FCGI") return bad(PROTOCOL_EXPECTED, raw, "FastCGI backends are not supported");
  return bad(PROTOCOL_EXPECTED, raw);
}

/** "on" or "off", spaces removed, as ingress-nginx's proxySSLOnOffRegex reads them. */
export function parseOnOff(raw: string): Parsed<boolean> {
  const word = raw.replaceAll(" ", "");
  if (word === "on") return good(true);
  if (word === "off") return good(false);
  return bad('"on" or "off"', raw);
}

export interface SecretRef {
  namespace: string;
  name: string;
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** "namespace/name", as ingress-nginx's k8s.ParseNameNS, each part a valid Kubernetes name. */
export function parseSecretRef(raw: string): Parsed<SecretRef> {
  const parts = raw.trim().split("/");
  const [namespace = "", name = ""] = parts;
  const valid =
    parts.length === 2 &&
    namespace.length <= 63 &&
    DNS_LABEL.test(namespace) &&
    name.length <= 253 &&
    DNS_SUBDOMAIN.test(name);
  return valid ? good({ namespace, name }) : bad('a Secret as "namespace/name"', raw);
}

const HOST_NAME =
  /^(\*\.)?[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*$/;

/**
 * A host name (or IP address) to send or check. ingress-nginx lets nginx variables through
 * ("$host"); Bulwark has no variables, so a "$" is refused rather than sent as written.
 */
export function parseHostName(raw: string): Parsed<string> {
  const value = raw.trim();
  if (value.length > 253 || !HOST_NAME.test(value)) {
    const detail = value.includes("$") ? "nginx variables are not supported" : undefined;
    return bad("a host name", raw, detail);
  }
  return good(value.toLowerCase());
}

/** Protocols as ingress-nginx's proxySSLProtocolRegex allows them (TLSv1 and TLSv1.1 were removed). */
export function parseTlsVersions(raw: string): Parsed<TlsVersion[]> {
  const words = raw.split(" ").filter(word => word !== "");
  const expected = '"TLSv1.2" and/or "TLSv1.3" separated by spaces';
  if (words.length === 0) return bad(expected, raw);
  for (const word of words) {
    if (word !== "TLSv1.2" && word !== "TLSv1.3") return bad(expected, raw, `${quote(word)}`);
  }
  return good([...new Set(words as TlsVersion[])].sort());
}

// ingress-nginx's proxySSLCiphersRegex: OpenSSL's cipher-list characters and nothing else.
const CIPHER_LIST = /^[A-Za-z0-9+:_\-!]+$/;

/** An OpenSSL cipher list that Node's OpenSSL accepts (it names at least one cipher it has). */
export function parseCiphers(raw: string): Parsed<string> {
  const value = raw.replaceAll(" ", "");
  const expected = "an OpenSSL cipher list";
  if (!CIPHER_LIST.test(value)) return bad(expected, raw, 'letters, digits, "+:_-!" only');
  try {
    createSecureContext({ ciphers: value });
  } catch {
    return bad(expected, raw, "names no cipher Node's OpenSSL has");
  }
  return good(value);
}

// ingress-nginx's RegexPathWithCapture without "$": Bulwark does not substitute captures here.
const PREFIX = /^[-._~a-zA-Z0-9/:]*$/;

/** An X-Forwarded-Prefix value; "" (ingress-nginx adds no header then) reads as none. */
export function parseForwardedPrefix(raw: string): Parsed<string | undefined> {
  const value = raw.trim();
  if (PREFIX.test(value)) return good(value === "" ? undefined : value);
  const detail = value.includes("$") ? "captured groups ($1) are not supported" : undefined;
  return bad('a path of letters, digits and "-._~/:"', raw, detail);
}

export const upstreamSchema = z
  .object({
    protocol: annotation(parseBackendProtocol).optional(),
    sslSecret: annotation(parseSecretRef).optional(),
    sslVerify: annotation(parseOnOff).optional(),
    sslVerifyDepth: annotation(raw => parseIntIn(raw, 1, MAX_VERIFY_DEPTH)).optional(),
    sslName: annotation(parseHostName).optional(),
    sslServerName: annotation(parseOnOff).optional(),
    sslProtocols: annotation(parseTlsVersions).optional(),
    sslCiphers: annotation(parseCiphers).optional(),
    vhost: annotation(parseHostName).optional(),
    forwardedPrefix: annotation(parseForwardedPrefix).optional(),
  } satisfies Record<keyof typeof fields, z.ZodType>)
  .superRefine((v, ctx) => {
    // nginx checks the certificate against proxy_ssl_name, which ingress-nginx leaves at its
    // upstream's name, "upstream_balancer": without a name, verification could only fail.
    if (v.sslName !== undefined) return;
    const needs = (field: "sslVerify" | "sslServerName", what: string) =>
      ctx.addIssue({
        code: "custom",
        path: [field],
        message: `"on" needs ${keyOf({ fields }, "sslName")}, the name ${what}`,
      });
    if (v.sslVerify === true) needs("sslVerify", "the backend's certificate must carry");
    if (v.sslServerName === true) needs("sslServerName", "to send as the TLS server name");
  })
  .transform(v => ({
    protocol: v.protocol ?? ("HTTP" as BackendProtocol),
    ssl: {
      secret: v.sslSecret,
      verify: v.sslVerify ?? false,
      verifyDepth: v.sslVerifyDepth ?? DEFAULT_VERIFY_DEPTH,
      name: v.sslName,
      serverName: v.sslServerName ?? false,
      protocols: v.sslProtocols ?? [...DEFAULT_PROXY_SSL_PROTOCOLS],
      /** undefined: Node's default list (ingress-nginx's "DEFAULT"). */
      ciphers: v.sslCiphers,
    },
    /** The Host header sent upstream; undefined: the request's. */
    vhost: v.vhost,
    forwardedPrefix: v.forwardedPrefix,
  }));

export type UpstreamConfig = z.output<typeof upstreamSchema>;
export type UpstreamSsl = UpstreamConfig["ssl"];

type Field = keyof typeof fields;
const SSL_FIELDS: readonly Field[] = [
  "sslSecret",
  "sslVerify",
  "sslVerifyDepth",
  "sslName",
  "sslServerName",
  "sslProtocols",
  "sslCiphers",
];

export const upstreamFamily: Family<UpstreamConfig, Field> = {
  name: "upstream",
  fields,
  schema: upstreamSchema,
  warnings: (config, present) => {
    if (config.protocol !== "HTTP" && config.protocol !== "GRPC") return [];
    const protocol = keyOf(upstreamFamily, "protocol");
    return SSL_FIELDS.filter(field => present.has(field)).map(
      field =>
        `${keyOf(upstreamFamily, field)} has no effect while ${protocol} is "${config.protocol}"`,
    );
  },
};

export function parseUpstream(
  annotations: Readonly<Record<string, string>> | undefined,
): Result<UpstreamConfig | undefined> {
  return parseFamily(upstreamFamily, annotations);
}
