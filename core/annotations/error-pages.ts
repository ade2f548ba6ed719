// ingress-nginx `custom-http-errors` and `default-backend` (internal/ingress/annotations/
// customhttperrors, defaultbackend): the backend's error answers replaced by another Service's,
// and that Service serving when the route's own has no ready endpoint.
import { z } from "zod";
import { keyOf, parseFamily, type Family } from "./family";
import { annotation, bad, good, parseList, type Parsed } from "./validators";
import type { Result } from "../result";

const fields = {
  customHttpErrors: {
    annotation: "custom-http-errors",
    type: "status list",
    default: "",
    doc: "Backend answers with these statuses (400..599, \",\" separated) are replaced by default-backend's answer to a request with X-Code, X-Format, X-Original-URI, X-Namespace, X-Ingress-Name, X-Service-Name and X-Service-Port; without default-backend, by the gateway's own page of that status.",
  },
  defaultBackend: {
    annotation: "default-backend",
    type: "Service name",
    default: "",
    doc: "A Service of the Ingress's namespace (its first port) that serves when the route's Service has no ready endpoint, and answers custom-http-errors.",
  },
} as const;

// ingress-nginx: `^(?:[4,5]\d{2},?)*$` once spaces are removed.
const STATUS = /^[45][0-9]{2}$/;
const MAX_CODES = 200;

export function parseErrorCodes(raw: string): Parsed<number[]> {
  const list = parseList(raw, {
    expected: `HTTP statuses from 400 to 599 separated by ","`,
    separator: ",",
    max: MAX_CODES,
    trim: true,
    entryProblem: entry => (STATUS.test(entry) ? undefined : "is not a status from 400 to 599"),
  });
  return list.ok ? good([...new Set(list.value.map(Number))].sort((a, b) => a - b)) : list;
}

// ingress-nginx's ValidateServiceName: a DNS-1035 label.
const DNS_1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;

export function parseServiceName(raw: string): Parsed<string> {
  if (raw.length <= 63 && DNS_1035_LABEL.test(raw)) return good(raw);
  return bad("the name of a Service in the Ingress's namespace (a DNS-1035 label)", raw);
}

export const errorPagesSchema = z
  .object({
    customHttpErrors: annotation(parseErrorCodes).optional(),
    defaultBackend: annotation(parseServiceName).optional(),
  } satisfies Record<keyof typeof fields, z.ZodType>)
  .transform(v => ({
    /** Sorted, without duplicates; empty when not set. */
    codes: v.customHttpErrors ?? [],
    /** A Service name in the Ingress's namespace. */
    defaultBackend: v.defaultBackend,
  }));

export type ErrorPagesConfig = z.output<typeof errorPagesSchema>;

export const errorPagesFamily: Family<ErrorPagesConfig, keyof typeof fields> = {
  name: "error-pages",
  fields,
  schema: errorPagesSchema,
  warnings: config =>
    config.codes.length > 0 && config.defaultBackend === undefined
      ? [
          `${keyOf(errorPagesFamily, "customHttpErrors")} without ${keyOf(errorPagesFamily, "defaultBackend")}: ` +
            "Bulwark has no global default backend, so those answers are replaced by its own plain page of the same status",
        ]
      : [],
};

export function parseErrorPages(
  annotations: Readonly<Record<string, string>> | undefined,
): Result<ErrorPagesConfig | undefined> {
  return parseFamily(errorPagesFamily, annotations);
}
