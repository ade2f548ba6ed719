// The gateway's settings: environment variables read through ONE zod schema whose keys are the
// variables' names, so a bad value is reported by the name the operator set.
import { z } from "zod";
import {
  flag,
  integer,
  ipRangeList,
  loadEnv,
  logLevel,
  namespaceList,
  oneOf,
  type Loaded,
} from "../core/env-settings";
import { podOrdinalFromName } from "../core/annotations/rollout";
import { parseExcludedNamespaces } from "../core/ingress/selection";
import { referrerAllowList } from "../core/annotations/referrer";
import { LISTEN_MODES } from "./listen-mode";
import { DEFAULT_PUBLISHER_NAMESPACES, parseGuardMode, parseKeysLocation } from "../core/checksum";

/** off | observe | enforce (true/false: enforce/off). */
function guardMode(name: string) {
  return z
    .string()
    .optional()
    .transform((text, ctx) => {
      const parsed = parseGuardMode(text, name);
      if (parsed.ok) return parsed.value;
      ctx.addIssue({ code: "custom", message: `${name} ${parsed.errors[0]?.message ?? ""}` });
      return z.NEVER;
    });
}

function publishersOf(named: string[], oldName: string[]): string[] {
  const list = named.length > 0 ? named : oldName;
  return list.length > 0 ? list : [...DEFAULT_PUBLISHER_NAMESPACES];
}

export const settingsSchema = z
  .object({
    BULWARK_POD_NAME: z
      .string({ error: "BULWARK_POD_NAME is required (the pod name, from the Downward API)" })
      .refine(name => podOrdinalFromName(name) >= 0, {
        message: "BULWARK_POD_NAME must end in -<ordinal>, as a StatefulSet pod's name does",
      }),
    KUBECONFIG: z.string().optional(),
    BULWARK_INGRESS_KUBECONFIG: z
      .string()
      .min(1, "BULWARK_INGRESS_KUBECONFIG must name a kubeconfig file when set")
      .optional(),
    BULWARK_HTTP_PORT: integer("BULWARK_HTTP_PORT", 8080, 0, 65535),
    BULWARK_HTTPS_PORT: integer("BULWARK_HTTPS_PORT", 8443, 0, 65535),
    BULWARK_ADMIN_PORT: integer("BULWARK_ADMIN_PORT", 9090, 0, 65535),
    BULWARK_LISTEN_HOST: z.string().default("0.0.0.0"),
    BULWARK_STATE_DIR: z
      .string()
      .min(1, "BULWARK_STATE_DIR must not be empty")
      .default("/var/lib/bulwark-gateway"),
    BULWARK_WORKERS: integer("BULWARK_WORKERS", 1, 1, 64),
    // How several workers share the ports (listen-mode.ts): the primary's round robin, or a
    // socket per worker (SO_REUSEPORT; round robin on a Node.js without it).
    BULWARK_LISTEN_MODE: oneOf("BULWARK_LISTEN_MODE", LISTEN_MODES, "round-robin"),
    BULWARK_INGRESS_CHECKSUM: guardMode("BULWARK_INGRESS_CHECKSUM"),
    BULWARK_SECRET_CHECKSUM: guardMode("BULWARK_SECRET_CHECKSUM"),
    BULWARK_WATCH_NAMESPACES: namespaceList("BULWARK_WATCH_NAMESPACES"),
    // Where checksum objects are trusted; BULWARK_CHECKSUM_NAMESPACES is its old name.
    BULWARK_CHECKSUM_PUBLISHER_NAMESPACES: namespaceList("BULWARK_CHECKSUM_PUBLISHER_NAMESPACES"),
    BULWARK_CHECKSUM_NAMESPACES: namespaceList("BULWARK_CHECKSUM_NAMESPACES"),
    // How long the checksum object before the newest still counts (a publish in flight).
    BULWARK_CHECKSUM_GRACE_SECONDS: integer("BULWARK_CHECKSUM_GRACE_SECONDS", 60, 0, 3600),
    // Signed attestations: only objects signed by a key in that ConfigMap count.
    BULWARK_CHECKSUM_REQUIRE_SIGNATURE: flag("BULWARK_CHECKSUM_REQUIRE_SIGNATURE", false),
    BULWARK_CHECKSUM_KEYS: z
      .string()
      .optional()
      .transform((text, ctx) => {
        const parsed = parseKeysLocation(text, "BULWARK_CHECKSUM_KEYS");
        if (parsed.ok) return parsed.value;
        ctx.addIssue({
          code: "custom",
          message: `BULWARK_CHECKSUM_KEYS ${parsed.errors[0]?.message ?? ""}`,
        });
        return z.NEVER;
      }),
    // Unset: the namespaces the webhooks skip, since nothing there was ever admitted.
    BULWARK_EXCLUDED_NAMESPACES: z
      .string()
      .optional()
      .transform((text, ctx) => {
        const parsed = parseExcludedNamespaces(text);
        if (parsed.ok) return parsed.value;
        const message = `BULWARK_EXCLUDED_NAMESPACES: ${parsed.errors[0]?.message ?? "invalid"}`;
        ctx.addIssue({ code: "custom", message });
        return z.NEVER;
      }),
    // Tengine-Ingress's ingress-referrer / canary-referrer ConfigMap keys, split as it splits them.
    BULWARK_INGRESS_REFERRERS: z.string().optional(),
    BULWARK_CANARY_REFERRERS: z.string().optional(),
    BULWARK_DRAIN_SECONDS: integer("BULWARK_DRAIN_SECONDS", 10, 0, 600),
    BULWARK_TRAFFIC_METRICS: flag("BULWARK_TRAFFIC_METRICS", true),
    BULWARK_ACCESS_LOG: flag("BULWARK_ACCESS_LOG", true),
    // Tengine-Ingress's max-canary-ing-num: its code default is 20, its docs say up to 200.
    BULWARK_MAX_CANARIES: integer("BULWARK_MAX_CANARIES", 20, 1, 200),
    // ingress-nginx redirects to the public HTTPS port (443), not the one the pod listens on.
    BULWARK_SSL_REDIRECT_PORT: integer("BULWARK_SSL_REDIRECT_PORT", 443, 1, 65535),
    // ingress-nginx's limit-req-status-code and limit-conn-status-code (both 503 by default).
    BULWARK_LIMIT_STATUS: integer("BULWARK_LIMIT_STATUS", 503, 400, 599),
    // The auth-url request: connecting, then its answer's head (past either, 500).
    BULWARK_AUTH_CONNECT_TIMEOUT_SECONDS: integer(
      "BULWARK_AUTH_CONNECT_TIMEOUT_SECONDS",
      5,
      1,
      600,
    ),
    BULWARK_AUTH_READ_TIMEOUT_SECONDS: integer("BULWARK_AUTH_READ_TIMEOUT_SECONDS", 15, 1, 600),
    // The front door, with nginx's defaults (client_header_timeout, client_body_timeout,
    // large_client_header_buffers, underscores_in_headers).
    BULWARK_CLIENT_HEADER_TIMEOUT_SECONDS: integer(
      "BULWARK_CLIENT_HEADER_TIMEOUT_SECONDS",
      60,
      1,
      3600,
    ),
    BULWARK_CLIENT_BODY_TIMEOUT_SECONDS: integer(
      "BULWARK_CLIENT_BODY_TIMEOUT_SECONDS",
      60,
      1,
      3600,
    ),
    BULWARK_MAX_REQUEST_HEAD_BYTES: integer(
      "BULWARK_MAX_REQUEST_HEAD_BYTES",
      64 * 1024,
      1024,
      1024 * 1024,
    ),
    BULWARK_MAX_REQUEST_TARGET_BYTES: integer(
      "BULWARK_MAX_REQUEST_TARGET_BYTES",
      8 * 1024,
      256,
      1024 * 1024,
    ),
    BULWARK_MAX_FIELD_LINE_BYTES: integer(
      "BULWARK_MAX_FIELD_LINE_BYTES",
      16 * 1024,
      256,
      1024 * 1024,
    ),
    BULWARK_UNDERSCORES_IN_HEADERS: flag("BULWARK_UNDERSCORES_IN_HEADERS", false),
    // ingress-nginx's proxy-real-ip-cidr with use-forwarded-headers; unlike its 0.0.0.0/0
    // default, nobody is trusted until named.
    BULWARK_TRUSTED_PROXIES: ipRangeList("BULWARK_TRUSTED_PROXIES"),
    // Cloud load balancers' PROXY protocol (v1 and v2) on both listeners (nginx's proxy_protocol).
    BULWARK_PROXY_PROTOCOL: flag("BULWARK_PROXY_PROTOCOL", false),
    // HTTP/2 by ALPN on the HTTPS listener (nginx-ingress's use-http2, on by default).
    BULWARK_HTTP2: flag("BULWARK_HTTP2", true),
    // h2c (prior knowledge only) on the HTTP port; off, as in nginx unless a listen says http2.
    BULWARK_HTTP2_CLEARTEXT: flag("BULWARK_HTTP2_CLEARTEXT", false),
    BULWARK_CANARY_MATCH: z
      .enum(["exact", "case-insensitive"], {
        error:
          "BULWARK_CANARY_MATCH must be exact (ingress-nginx) or case-insensitive (Tengine-Ingress)",
      })
      .default("exact"),
    LOG_LEVEL: logLevel(),
  })
  .transform(env => ({
    podName: env.BULWARK_POD_NAME,
    ordinal: podOrdinalFromName(env.BULWARK_POD_NAME),
    kubeconfig: env.KUBECONFIG,
    ingressKubeconfig: env.BULWARK_INGRESS_KUBECONFIG,
    httpPort: env.BULWARK_HTTP_PORT,
    httpsPort: env.BULWARK_HTTPS_PORT,
    adminPort: env.BULWARK_ADMIN_PORT,
    host: env.BULWARK_LISTEN_HOST,
    stateDir: env.BULWARK_STATE_DIR,
    workers: env.BULWARK_WORKERS,
    listenMode: env.BULWARK_LISTEN_MODE,
    checksum: { ingress: env.BULWARK_INGRESS_CHECKSUM, secret: env.BULWARK_SECRET_CHECKSUM },
    watchNamespaces: env.BULWARK_WATCH_NAMESPACES,
    checksumGraceMs: env.BULWARK_CHECKSUM_GRACE_SECONDS * 1000,
    signatures: {
      required: env.BULWARK_CHECKSUM_REQUIRE_SIGNATURE,
      keys: env.BULWARK_CHECKSUM_KEYS,
    },
    excludedNamespaces: env.BULWARK_EXCLUDED_NAMESPACES as ReadonlySet<string>,
    ingressReferrers: referrerAllowList(env.BULWARK_INGRESS_REFERRERS),
    /** The publisher namespaces: only there are checksum objects read (default bulwark-system). */
    checksumNamespaces: publishersOf(
      env.BULWARK_CHECKSUM_PUBLISHER_NAMESPACES,
      env.BULWARK_CHECKSUM_NAMESPACES,
    ),
    drainMs: env.BULWARK_DRAIN_SECONDS * 1000,
    observe: { metrics: env.BULWARK_TRAFFIC_METRICS, accessLog: env.BULWARK_ACCESS_LOG },
    compile: {
      maxCanaries: env.BULWARK_MAX_CANARIES,
      canaryReferrers: [...referrerAllowList(env.BULWARK_CANARY_REFERRERS)],
      traffic: {
        redirectPort: env.BULWARK_SSL_REDIRECT_PORT,
        compare: env.BULWARK_CANARY_MATCH,
        limits: { status: env.BULWARK_LIMIT_STATUS, share: env.BULWARK_WORKERS },
        auth: {
          connectTimeoutMs: env.BULWARK_AUTH_CONNECT_TIMEOUT_SECONDS * 1000,
          readTimeoutMs: env.BULWARK_AUTH_READ_TIMEOUT_SECONDS * 1000,
        },
      },
    },
    frontDoor: {
      headTimeoutMs: env.BULWARK_CLIENT_HEADER_TIMEOUT_SECONDS * 1000,
      bodyTimeoutMs: env.BULWARK_CLIENT_BODY_TIMEOUT_SECONDS * 1000,
      maxHeadBytes: env.BULWARK_MAX_REQUEST_HEAD_BYTES,
      maxTargetBytes: env.BULWARK_MAX_REQUEST_TARGET_BYTES,
      maxFieldBytes: env.BULWARK_MAX_FIELD_LINE_BYTES,
      underscoresInHeaders: env.BULWARK_UNDERSCORES_IN_HEADERS,
      trustedProxies: env.BULWARK_TRUSTED_PROXIES,
      proxyProtocol: env.BULWARK_PROXY_PROTOCOL,
      http2: env.BULWARK_HTTP2,
      http2Cleartext: env.BULWARK_HTTP2_CLEARTEXT,
    },
    logLevel: env.LOG_LEVEL,
  }));

export type Settings = z.output<typeof settingsSchema>;

/** The settings, or one line naming the first bad one. */
export function readSettings(env: NodeJS.ProcessEnv): Loaded<Settings> {
  // BULWARK_EXCLUDED_NAMESPACES="" serves every namespace; unset keeps the webhooks' exclusions.
  return loadEnv(settingsSchema, env, ["BULWARK_EXCLUDED_NAMESPACES"]);
}
