// ingress-nginx CORS annotations, with ingress-nginx's defaults (internal/ingress/annotations/cors).
// ingress-nginx drops a bad origin or list and falls back to a default; here it is an error.
import { z } from "zod";
import { keyOf, parseFamily, type Family } from "./family";
import {
  annotation,
  good,
  parseBool,
  parseIntIn,
  parseList,
  quote,
  type Parsed,
} from "./validators";
import type { Result } from "../result";

const fields = {
  enabled: {
    annotation: "enable-cors",
    type: "boolean",
    default: "false",
    doc: "Answer CORS preflights and add CORS headers (default false).",
  },
  allowOrigin: {
    annotation: "cors-allow-origin",
    type: "origin list",
    default: "*",
    doc: 'Allowed origins: "*" or "scheme://host[:port]" list, "," separated; "*." for one subdomain level.',
  },
  allowMethods: {
    annotation: "cors-allow-methods",
    type: "method list",
    default: "GET, PUT, POST, DELETE, PATCH, OPTIONS",
    doc: 'Access-Control-Allow-Methods, "," separated (default "GET, PUT, POST, DELETE, PATCH, OPTIONS").',
  },
  allowHeaders: {
    annotation: "cors-allow-headers",
    type: "header list",
    default:
      "DNT,X-CustomHeader,Keep-Alive,User-Agent,X-Requested-With,If-Modified-Since,Cache-Control,Content-Type,Authorization",
    doc: 'Access-Control-Allow-Headers, "," separated (default: ingress-nginx\'s list, DNT … Authorization).',
  },
  exposeHeaders: {
    annotation: "cors-expose-headers",
    type: "header list",
    default: "",
    doc: 'Access-Control-Expose-Headers, "," separated; "*" allowed (default none).',
  },
  allowCredentials: {
    annotation: "cors-allow-credentials",
    type: "boolean",
    default: "true",
    doc: "Send Access-Control-Allow-Credentials: true (default true).",
  },
  maxAgeSeconds: {
    annotation: "cors-max-age",
    type: "integer (seconds)",
    default: "1728000",
    doc: "Access-Control-Max-Age: seconds a preflight may be cached (default 1728000).",
  },
} as const;

export const CORS_DEFAULTS = {
  allowOrigin: "*",
  allowMethods: ["GET", "PUT", "POST", "DELETE", "PATCH", "OPTIONS"],
  allowHeaders: [
    "DNT",
    "Keep-Alive",
    "User-Agent",
    "X-Requested-With",
    "If-Modified-Since",
    "Cache-Control",
    "Content-Type",
    "Range",
    "Authorization",
  ],
  exposeHeaders: [],
  allowCredentials: true,
  maxAgeSeconds: 1728000,
} as const;

// Any URI scheme (ingress-nginx accepts custom ones), a DNS name with an optional leading "*." for
// one subdomain level, an optional port. Lower case: origins compare case-insensitively.
const ORIGIN =
  /^[a-z][a-z0-9+.-]*:\/\/(\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*(:([0-9]{1,5}))?$/;
const ORIGIN_EXPECTED = `"*" or origins "scheme://host[:port]" separated by ","`;
const MAX_LIST = 100;

function originProblem(origin: string): string | undefined {
  if (origin === "*") return "is only allowed alone";
  if (origin === "null") return undefined;
  const match = ORIGIN.exec(origin.toLowerCase());
  if (!match) return "is not scheme://host[:port] (no path, no trailing slash)";
  const port = match[6] === undefined ? 1 : Number(match[6]);
  return port >= 1 && port <= 65535 ? undefined : "has a port outside 1..65535";
}

/** "*" for any origin, else the origins in lower case; "null" is kept as ingress-nginx keeps it. */
function parseOrigins(raw: string): Parsed<"*" | string[]> {
  if (raw.trim() === "*") return good("*");
  const list = parseList(raw, {
    expected: ORIGIN_EXPECTED,
    separator: ",",
    max: MAX_LIST,
    trim: true,
    entryProblem: originProblem,
  });
  return list.ok ? good(list.value.map(o => o.toLowerCase())) : list;
}

function tokenList(expected: string, entry: RegExp, allowed: string) {
  return (raw: string): Parsed<string[]> =>
    parseList(raw, {
      expected,
      separator: ",",
      max: MAX_LIST,
      trim: true,
      entryProblem: e => (entry.test(e) ? undefined : `has a character other than ${allowed}`),
    });
}

// ingress-nginx's character sets (corsMethodsRegex, HeadersVariable, corsExposeHeadersRegex): they
// keep nginx variables and header injection out of the response.
const METHOD = /^[A-Za-z]+$/;
const HEADER = /^[A-Za-z0-9_-]+$/;
const EXPOSED = /^([A-Za-z0-9_-]+|\*)$/;
const LETTERS = "letters";
const NAME = `letters, digits, "-" and "_"`;

export const corsSchema = z
  .object({
    enabled: annotation(parseBool).optional(),
    allowOrigin: annotation(parseOrigins).optional(),
    allowMethods: annotation(
      tokenList(`HTTP methods separated by ","`, METHOD, LETTERS),
    ).optional(),
    allowHeaders: annotation(tokenList(`header names separated by ","`, HEADER, NAME)).optional(),
    exposeHeaders: annotation(
      tokenList(`header names or "*" separated by ","`, EXPOSED, `${NAME} or a lone "*"`),
    ).optional(),
    allowCredentials: annotation(parseBool).optional(),
    maxAgeSeconds: annotation(raw =>
      parseIntIn(raw, 0, 0x7fffffff, " number of seconds"),
    ).optional(),
  } satisfies Record<keyof typeof fields, z.ZodType>)
  .transform(v => ({
    enabled: v.enabled ?? false,
    /** "*" or lower-case origins; a "*." origin matches exactly one more leading label. */
    allowOrigin: v.allowOrigin ?? CORS_DEFAULTS.allowOrigin,
    allowMethods: v.allowMethods ?? [...CORS_DEFAULTS.allowMethods],
    allowHeaders: v.allowHeaders ?? [...CORS_DEFAULTS.allowHeaders],
    exposeHeaders: v.exposeHeaders ?? [],
    allowCredentials: v.allowCredentials ?? CORS_DEFAULTS.allowCredentials,
    maxAgeSeconds: v.maxAgeSeconds ?? CORS_DEFAULTS.maxAgeSeconds,
  }));

export type CorsConfig = z.output<typeof corsSchema>;

export const corsFamily: Family<CorsConfig, keyof typeof fields> = {
  name: "cors",
  fields,
  schema: corsSchema,
  warnings: (config, present) => corsWarnings(config, present),
};

function corsWarnings(config: CorsConfig, present: ReadonlySet<keyof typeof fields>): string[] {
  const enable = keyOf(corsFamily, "enabled");
  if (!config.enabled) {
    // ingress-nginx ignores cors-* without enable-cors; legal, but rarely what was meant.
    const ignored = [...present].filter(f => f !== "enabled").map(f => keyOf(corsFamily, f));
    return ignored.map(key => `${key} is ignored because ${enable} is not "true"`);
  }
  if (Array.isArray(config.allowOrigin) && config.allowOrigin.includes("null")) {
    return [
      `${keyOf(corsFamily, "allowOrigin")} allows the origin ${quote("null")}, ` +
        "which sandboxed iframes and local files also send",
    ];
  }
  return [];
}

export function parseCors(
  annotations: Readonly<Record<string, string>> | undefined,
): Result<CorsConfig | undefined> {
  return parseFamily(corsFamily, annotations);
}
