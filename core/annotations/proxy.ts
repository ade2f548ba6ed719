// ingress-nginx proxy annotations: upstream timeouts, request body limit, retries. Unset fields stay
// undefined so the gateway applies its own defaults (INGRESS_NGINX_PROXY_DEFAULTS, as ingress-nginx's
// ConfigMap does).
import { z } from "zod";
import { parseFamily, type Family } from "./family";
import { annotation, parseIntIn, parseSeconds, parseSize } from "./validators";
import type { Result } from "../result";

const fields = {
  connectTimeoutSeconds: {
    annotation: "proxy-connect-timeout",
    type: "integer (seconds)",
    default: "5",
    doc: "Timeout to connect to the backend, in whole seconds without a unit (default 5).",
  },
  readTimeoutSeconds: {
    annotation: "proxy-read-timeout",
    type: "integer (seconds)",
    default: "60",
    doc: "Timeout between two reads from the backend, in whole seconds without a unit (default 60).",
  },
  sendTimeoutSeconds: {
    annotation: "proxy-send-timeout",
    type: "integer (seconds)",
    default: "60",
    doc: "Timeout between two writes to the backend, in whole seconds without a unit (default 60).",
  },
  bodySize: {
    annotation: "proxy-body-size",
    type: "size",
    default: "1m",
    doc: 'Largest request body, nginx size syntax ("8m", "512k"); "0" for no limit (default 1m).',
  },
  nextUpstreamTries: {
    annotation: "proxy-next-upstream-tries",
    type: "integer",
    default: "3",
    doc: "How many backends a request may be tried on; 0 for no limit (default 3).",
  },
} as const;

/** ingress-nginx's ConfigMap defaults, for the consumer to apply to unset fields. */
export const INGRESS_NGINX_PROXY_DEFAULTS = {
  connectTimeoutSeconds: 5,
  readTimeoutSeconds: 60,
  sendTimeoutSeconds: 60,
  bodySize: 1024 * 1024,
  nextUpstreamTries: 3,
} as const;

// Beyond this, "tries" is a typo rather than a retry policy.
const MAX_TRIES = 100;

export const proxySchema = z.object({
  connectTimeoutSeconds: annotation(parseSeconds).optional(),
  readTimeoutSeconds: annotation(parseSeconds).optional(),
  sendTimeoutSeconds: annotation(parseSeconds).optional(),
  /** Bytes, or "unlimited" for "0". */
  bodySize: annotation(parseSize).optional(),
  nextUpstreamTries: annotation(raw => parseIntIn(raw, 0, MAX_TRIES)).optional(),
} satisfies Record<keyof typeof fields, z.ZodType>);

export type ProxyConfig = z.output<typeof proxySchema>;

export const proxyFamily: Family<ProxyConfig, keyof typeof fields> = {
  name: "proxy",
  fields,
  schema: proxySchema,
};

export function parseProxy(
  annotations: Readonly<Record<string, string>> | undefined,
): Result<ProxyConfig | undefined> {
  return parseFamily(proxyFamily, annotations);
}
