// Every annotation under nginx.ingress.kubernetes.io/ that Bulwark knows of: the ones its families
// read (registry.ts), and every other key ingress-nginx documents (plus Tengine-Ingress's few),
// each marked harmless to ignore or a security control. Ignoring a security control would serve
// a route more openly than ingress-nginx did, so an Ingress carrying one is denied at admission
// (or warned about, in migration mode) and refused by the gateway: fail closed.
import { NGINX_ANNOTATION_PREFIX } from "../names";
import { ANNOTATION_REGISTRY, wrongKindWarning, type AnnotatedKind } from "./registry";
import { annotationKey } from "./validators";

export type Support = "supported" | "unsupported-harmless" | "unsupported-security";

/** The first Bulwark release; a field without `since` has been read since then. */
export const FIRST_RELEASE = "0.1.0";

export interface CatalogEntry {
  /** The full key. */
  key: string;
  type: string;
  /** What applies when absent in Bulwark ("" when nothing does, and for every unsupported key). */
  default: string;
  support: Support;
  /** The release that first read it; undefined for unsupported keys. */
  since: string | undefined;
  /** What it does (supported) or why ignoring it is harmless or not (unsupported). */
  doc: string;
}

interface UnsupportedGroup {
  support: Exclude<Support, "supported">;
  why: string;
  /** name → type, as ingress-nginx's annotation table gives it. */
  keys: Readonly<Record<string, string>>;
}

// Types from ingress-nginx's annotations.md table ("string" where it gives none).
const UNSUPPORTED: readonly UnsupportedGroup[] = [
  {
    support: "unsupported-security",
    why: "global authentication (enable-global-auth) and satisfy; served without them, the route would be open to anyone",
    keys: {
      "enable-global-auth": '"true" or "false"',
      satisfy: "string",
    },
  },
  {
    support: "unsupported-security",
    why: "headers for the external auth request from a ConfigMap (auth-url is served); the gateway does not read ConfigMaps, and an auth service may rely on them to decide",
    keys: { "auth-proxy-set-headers": "string" },
  },
  {
    support: "unsupported-security",
    why: "raw nginx configuration for the external auth request (auth-url is served); Bulwark cannot run it and cannot know what it checked",
    keys: { "auth-snippet": "string" },
  },
  {
    support: "unsupported-security",
    why: "client certificate authentication (mutual TLS); served without it, any client would be let in",
    keys: {
      "auth-tls-secret": "string",
      "auth-tls-verify-depth": "number",
      "auth-tls-verify-client": "string",
      "auth-tls-error-page": "string",
      "auth-tls-pass-certificate-to-upstream": '"true" or "false"',
      "auth-tls-match-cn": "string",
    },
  },
  {
    support: "unsupported-security",
    why: "raw nginx configuration, often deny rules or headers; Bulwark cannot run it and cannot know what it protected",
    keys: {
      "configuration-snippet": "string",
      "server-snippet": "string",
      "stream-snippet": "string",
      "modsecurity-snippet": "string",
    },
  },
  {
    support: "unsupported-security",
    why: "the ModSecurity web application firewall; served without it, requests it would block reach the backend",
    keys: {
      "enable-modsecurity": "bool",
      "enable-owasp-core-rules": "bool",
      "modsecurity-transaction-id": "string",
    },
  },
  {
    support: "unsupported-security",
    why: "TLS passed through to the backend; served without it, TLS would be terminated by the wrong party",
    keys: {
      "ssl-passthrough": '"true" or "false"',
    },
  },
  {
    support: "unsupported-security",
    why: "restricts the TLS versions or ciphers clients may use; served without it, weaker ones would be accepted",
    keys: {
      "ssl-ciphers": "string",
      "ssl-prefer-server-ciphers": '"true" or "false"',
      "ssl-protocols": "string (Tengine-Ingress)",
    },
  },
  {
    support: "unsupported-security",
    why: "response headers, often security headers (HSTS, CSP); served without them, browsers would lose those protections",
    keys: { "custom-headers": "string" },
  },
  {
    support: "unsupported-harmless",
    why: "balancing over the Service's cluster IP instead of its endpoints; Bulwark balances over the ready endpoints",
    keys: {
      "service-upstream": '"true" or "false"',
    },
  },
  {
    support: "unsupported-harmless",
    why: "buffering and upstream protocol tuning; Bulwark streams requests and responses",
    keys: {
      "proxy-buffers-number": "number",
      "proxy-buffer-size": "string",
      "proxy-busy-buffers-size": "string",
      "proxy-max-temp-file-size": "string",
      "proxy-request-buffering": "string",
      "proxy-http-version": '"1.0" or "1.1"',
      "proxy-next-upstream": "string",
      "proxy-next-upstream-timeout": "number",
      "connection-proxy-header": "string",
      "http2-push-preload": '"true" or "false"',
    },
  },
  {
    support: "unsupported-harmless",
    why: "rewrites of what the backend sends or is sent, or extra routing conveniences; ignoring them changes function, never exposure",
    keys: {
      "preserve-trailing-slash": '"true" or "false"',
      "proxy-cookie-domain": "string",
      "proxy-cookie-path": "string",
      "proxy-redirect-from": "string",
      "proxy-redirect-to": "string",
    },
  },
  {
    support: "unsupported-harmless",
    why: "request mirroring; not sending copies exposes nothing",
    keys: { "mirror-request-body": "string", "mirror-target": "string", "mirror-host": "string" },
  },
  {
    support: "unsupported-harmless",
    why: "logging and tracing switches; Bulwark always writes its access log",
    keys: {
      "enable-access-log": '"true" or "false"',
      "enable-rewrite-log": '"true" or "false"',
      "enable-opentelemetry": '"true" or "false"',
      "opentelemetry-trust-incoming-span": '"true" or "false"',
    },
  },
];

function buildCatalog(): Map<string, CatalogEntry> {
  const catalog = new Map<string, CatalogEntry>();
  for (const info of ANNOTATION_REGISTRY) {
    const { type, doc } = info.field;
    const entry = { key: info.key, type, default: info.field.default, doc };
    catalog.set(info.key, {
      ...entry,
      support: "supported",
      since: info.field.since ?? FIRST_RELEASE,
    });
  }
  for (const group of UNSUPPORTED) {
    for (const [name, type] of Object.entries(group.keys)) {
      const key = annotationKey(name);
      if (catalog.has(key))
        throw new Error(`${key} is both supported and in the unsupported table`);
      catalog.set(key, {
        key,
        type,
        default: "",
        support: group.support,
        since: undefined,
        doc: group.why,
      });
    }
  }
  return catalog;
}

const CATALOG = buildCatalog();

/** Every known key, sorted. */
export const ANNOTATION_CATALOG: readonly CatalogEntry[] = [...CATALOG.values()].sort((a, b) =>
  a.key < b.key ? -1 : a.key > b.key ? 1 : 0,
);

export function catalogEntry(key: string): CatalogEntry | undefined {
  return CATALOG.get(key);
}

/** The keys of security controls Bulwark does not implement, in the order they appear. */
export function unsupportedSecurityAnnotations(
  annotations: Readonly<Record<string, string>> | undefined,
): string[] {
  const keys: string[] = [];
  for (const key of Object.keys(annotations ?? {})) {
    if (CATALOG.get(key)?.support === "unsupported-security") keys.push(key);
  }
  return keys;
}

/** Why an unsupported security annotation stops an Ingress from being served. */
export function securityControlProblem(key: string): string {
  return `is a security control Bulwark does not implement (${CATALOG.get(key)?.doc ?? "unknown"})`;
}

/**
 * Warnings for keys under our prefix that nothing reads on this kind of object: unknown keys,
 * harmless ones Bulwark does not implement, keys of another kind. Not errors: denying them would
 * block migrations. Security controls are not warned about here (see securityRefusals); keys
 * outside the prefix are not ours to judge.
 */
export function ignoredAnnotationWarnings(
  annotations: Readonly<Record<string, string>> | undefined,
  kind: AnnotatedKind,
): string[] {
  const warnings: string[] = [];
  for (const key of Object.keys(annotations ?? {})) {
    if (!key.startsWith(NGINX_ANNOTATION_PREFIX)) continue;
    const entry = CATALOG.get(key);
    const warning =
      entry === undefined
        ? `unknown annotation "${key}", ignored`
        : entry.support === "supported"
          ? wrongKindWarning(key, kind)
          : entry.support === "unsupported-harmless" || kind !== "Ingress"
            ? `annotation "${key}" is not implemented by Bulwark, ignored: ${entry.doc}`
            : undefined;
    if (warning !== undefined) warnings.push(warning);
  }
  return warnings;
}
