// ingress-nginx `permanent-redirect`, `temporal-redirect` (their codes) and `app-root`
// (internal/ingress/annotations/redirect, rewrite): answers that send the client elsewhere
// without reaching the backend. ingress-nginx falls back to the default code when a code is out of
// range and drops a bad URL with a log line; here both are errors.
import { z } from "zod";
import { keyOf, parseFamily, type Family } from "./family";
import { annotation, bad, good, parseIntIn, type Parsed } from "./validators";
import type { Result } from "../result";

const fields = {
  permanentRedirect: {
    annotation: "permanent-redirect",
    type: "URL",
    default: "",
    doc: "Answer every request of the Ingress's paths with a redirect to this http(s) URL (301 unless permanent-redirect-code); the request's path is not appended.",
  },
  permanentRedirectCode: {
    annotation: "permanent-redirect-code",
    type: "integer (300..308)",
    default: "301",
    doc: "The status of permanent-redirect (default 301).",
  },
  temporalRedirect: {
    annotation: "temporal-redirect",
    type: "URL",
    default: "",
    doc: "As permanent-redirect with 302 (unless temporal-redirect-code); wins when both are set, as in ingress-nginx.",
  },
  temporalRedirectCode: {
    annotation: "temporal-redirect-code",
    type: "integer (300..307)",
    default: "302",
    doc: "The status of temporal-redirect (default 302).",
  },
  appRoot: {
    annotation: "app-root",
    type: "path",
    default: "",
    doc: 'Redirect requests for exactly "/" (any query) to this path on the same scheme and host, with 302.',
  },
} as const;

export const PERMANENT_REDIRECT_DEFAULT = 301;
export const TEMPORAL_REDIRECT_DEFAULT = 302;
export const APP_ROOT_STATUS = 302;

// ingress-nginx's URLIsValidRegex: letters, digits and -._~/:,?&= only (no "$": no nginx variables,
// no spaces, no "%"), and isValidURL: an http or https scheme. A host is required here too.
const URL_CHARS = /^[-._~a-zA-Z0-9/:,?&=]+$/;
const HTTP_URL = /^https?:\/\/[^/?:]+/;
const URL_EXPECTED = `an http:// or https:// URL of letters, digits and -._~/:,?&=`;

export function parseRedirectUrl(raw: string): Parsed<string> {
  if (!URL_CHARS.test(raw)) return bad(URL_EXPECTED, raw);
  if (!HTTP_URL.test(raw)) return bad(URL_EXPECTED, raw, "no http(s) scheme or no host");
  try {
    new URL(raw);
  } catch {
    return bad(URL_EXPECTED, raw, "not a URL");
  }
  return good(raw);
}

// ingress-nginx's RegexPathWithCapture without "$" (nginx would expand it as a variable in
// `return 302 $scheme://$http_host<app-root>`), and url.ParseRequestURI without a scheme: a path.
const APP_ROOT = /^\/[-._~a-zA-Z0-9/:]*$/;

export function parseAppRoot(raw: string): Parsed<string> {
  return APP_ROOT.test(raw)
    ? good(raw)
    : bad(`an absolute path such as "/app" (letters, digits and -._~/:)`, raw);
}

export const urlRedirectSchema = z
  .object({
    permanentRedirect: annotation(parseRedirectUrl).optional(),
    permanentRedirectCode: annotation(raw => parseIntIn(raw, 300, 308)).optional(),
    temporalRedirect: annotation(parseRedirectUrl).optional(),
    temporalRedirectCode: annotation(raw => parseIntIn(raw, 300, 307)).optional(),
    appRoot: annotation(parseAppRoot).optional(),
  } satisfies Record<keyof typeof fields, z.ZodType>)
  .transform(v => ({
    /** The redirect every request gets: temporal-redirect first, as ingress-nginx checks it first. */
    redirect: chooseRedirect(v),
    appRoot: v.appRoot,
  }));

interface ParsedRedirects {
  permanentRedirect?: string | undefined;
  permanentRedirectCode?: number | undefined;
  temporalRedirect?: string | undefined;
  temporalRedirectCode?: number | undefined;
}

export interface UrlRedirect {
  kind: "permanent" | "temporal";
  url: string;
  status: number;
}

function chooseRedirect(v: ParsedRedirects): UrlRedirect | undefined {
  if (v.temporalRedirect !== undefined) {
    const status = v.temporalRedirectCode ?? TEMPORAL_REDIRECT_DEFAULT;
    return { kind: "temporal", url: v.temporalRedirect, status };
  }
  if (v.permanentRedirect !== undefined) {
    const status = v.permanentRedirectCode ?? PERMANENT_REDIRECT_DEFAULT;
    return { kind: "permanent", url: v.permanentRedirect, status };
  }
  return undefined;
}

export type UrlRedirectConfig = z.output<typeof urlRedirectSchema>;

type Field = keyof typeof fields;

export const urlRedirectFamily: Family<UrlRedirectConfig, Field> = {
  name: "url-redirect",
  fields,
  schema: urlRedirectSchema,
  warnings: (_config, present) => urlRedirectWarnings(present),
};

/** Codes without their URL, and a permanent redirect shadowed by a temporal one. */
function urlRedirectWarnings(present: ReadonlySet<Field>): string[] {
  const key = (field: Field) => keyOf(urlRedirectFamily, field);
  const warnings: string[] = [];
  const unused = (code: Field, url: Field) => {
    if (present.has(code) && !present.has(url))
      warnings.push(`${key(code)} is ignored because ${key(url)} is not set`);
  };
  unused("permanentRedirectCode", "permanentRedirect");
  unused("temporalRedirectCode", "temporalRedirect");
  if (present.has("permanentRedirect") && present.has("temporalRedirect")) {
    warnings.push(
      `${key("permanentRedirect")} is ignored because ${key("temporalRedirect")} is set (it wins, as in ingress-nginx)`,
    );
  }
  return warnings;
}

export function parseUrlRedirect(
  annotations: Readonly<Record<string, string>> | undefined,
): Result<UrlRedirectConfig | undefined> {
  return parseFamily(urlRedirectFamily, annotations);
}
