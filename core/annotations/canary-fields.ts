// The canary annotations: ingress-nginx's names and meanings, plus Tengine-Ingress's extensions,
// and the schema of each one on its own. Rules between them are in canary-rules.ts.
import { z } from "zod";
import {
  parseHeaderActions,
  parseModOperator,
  parsePattern,
  parseQueryActions,
  parseQueryName,
  parseTokenName,
  valueList,
} from "./canary-values";
import { annotation, annotationKey, parseBool, parseIntIn } from "./validators";
import type { AnnotationField } from "./family";

export const canaryFields = {
  enabled: {
    annotation: "canary",
    type: "boolean",
    default: "false",
    doc: 'Marks this ingress as a canary of the main ingress with the same host and path ("true"/"false").',
  },
  weight: {
    annotation: "canary-weight",
    type: "integer",
    default: "0",
    doc: "Share of the requests no rule decides sent to the canary, out of canary-weight-total; at or above it, all of them.",
  },
  weightTotal: {
    annotation: "canary-weight-total",
    type: "integer",
    default: "100",
    doc: "Total the weights are out of, up to 10000; 100 or below reads as 100 (ingress-nginx). On the canary (ingress-nginx) or the main ingress (Tengine); the canary's wins.",
  },
  header: {
    annotation: "canary-by-header",
    type: "header name",
    default: "",
    doc: 'Header routing to the canary when "always" (ingress-nginx: back to main when "never").',
  },
  headerValue: {
    annotation: "canary-by-header-value",
    type: "string list",
    default: "",
    doc: 'Header values routing to the canary instead of "always": "v1||v2", at most 20.',
  },
  headerPattern: {
    annotation: "canary-by-header-pattern",
    type: "RE2 regex",
    default: "",
    doc: "Regular expression (RE2 syntax, unanchored; at most 512 characters and 5 000 RE2 instructions) on the header value, which matches only up to 8 KiB; ignored when -value is set.",
  },
  cookie: {
    annotation: "canary-by-cookie",
    type: "cookie name",
    default: "",
    doc: 'Cookie routing to the canary when "always" (ingress-nginx: back to main when "never").',
  },
  cookieValue: {
    annotation: "canary-by-cookie-value",
    type: "string list",
    default: "",
    doc: 'Cookie values routing to the canary instead of "always": "v1||v2", at most 20 (Tengine).',
  },
  query: {
    annotation: "canary-by-query",
    type: "query name",
    default: "",
    doc: 'Query parameter routing to the canary when "always" (Tengine).',
  },
  queryValue: {
    annotation: "canary-by-query-value",
    type: "string list",
    default: "",
    doc: 'Query parameter values routing to the canary instead of "always": "v1||v2", at most 20 (Tengine).',
  },
  modDivisor: {
    annotation: "canary-mod-divisor",
    type: "integer",
    default: "",
    doc: "Divisor 2..100 of the mod rule: integer(value) % divisor <operator> remainder (Tengine).",
  },
  modOperator: {
    annotation: "canary-mod-relational-operator",
    type: "operator",
    default: "",
    doc: 'Operator of the mod rule: "==", ">", ">=", "<" or "<=" (Tengine).',
  },
  modRemainder: {
    annotation: "canary-mod-remainder",
    type: "integer",
    default: "",
    doc: "Remainder of the mod rule, 0..divisor-1 (Tengine).",
  },
  requestAddHeader: {
    annotation: "canary-request-add-header",
    type: "header list",
    default: "",
    doc: 'Headers added to canary requests: "name:value||name:value", at most 2 (Tengine).',
  },
  requestAppendHeader: {
    annotation: "canary-request-append-header",
    type: "header list",
    default: "",
    doc: 'Values appended to canary request headers: "name:value||name:value", at most 2 (Tengine).',
  },
  requestAddQuery: {
    annotation: "canary-request-add-query",
    type: "query list",
    default: "",
    doc: 'Query parameters added to canary requests: "a=b&c=d", at most 2 (Tengine).',
  },
  responseAddHeader: {
    annotation: "canary-response-add-header",
    type: "header list",
    default: "",
    doc: 'Headers added to canary responses: "name:value||name:value", at most 2 (Tengine).',
  },
  responseAppendHeader: {
    annotation: "canary-response-append-header",
    type: "header list",
    default: "",
    doc: 'Values appended to canary response headers: "name:value||name:value", at most 2 (Tengine).',
  },
} as const satisfies Record<string, AnnotationField>;

export type CanaryField = keyof typeof canaryFields;

/** The full annotation key of a canary field, for messages. */
export function canaryKey(field: CanaryField): string {
  return annotationKey(canaryFields[field].annotation);
}

// Tengine's canary-weight-total range is [100, 10000]; 1..10000 also admits ingress-nginx totals
// below 100 and rejects nonsense such as 0 (a division by zero) or 1e9.
export const MAX_CANARY_WEIGHT_TOTAL = 10000;

export const canaryFieldsSchema = z.object({
  enabled: annotation(parseBool).optional(),
  weight: annotation(raw => parseIntIn(raw, 0, MAX_CANARY_WEIGHT_TOTAL)).optional(),
  // ingress-nginx takes any integer and reads one of 100 or below as 100 (balancer.lua); the
  // rules warn about that rather than deny what worked there.
  weightTotal: annotation(raw => parseIntIn(raw, 0, MAX_CANARY_WEIGHT_TOTAL)).optional(),
  header: annotation(parseTokenName).optional(),
  headerValue: annotation(valueList("header")).optional(),
  headerPattern: annotation(parsePattern).optional(),
  cookie: annotation(parseTokenName).optional(),
  cookieValue: annotation(valueList("cookie")).optional(),
  query: annotation(parseQueryName).optional(),
  queryValue: annotation(valueList("query")).optional(),
  modDivisor: annotation(raw => parseIntIn(raw, 2, 100)).optional(),
  modOperator: annotation(parseModOperator).optional(),
  // The upper bound is the divisor's, checked between fields.
  modRemainder: annotation(raw => parseIntIn(raw, 0, 99)).optional(),
  requestAddHeader: annotation(parseHeaderActions).optional(),
  requestAppendHeader: annotation(parseHeaderActions).optional(),
  requestAddQuery: annotation(parseQueryActions).optional(),
  responseAddHeader: annotation(parseHeaderActions).optional(),
  responseAppendHeader: annotation(parseHeaderActions).optional(),
} satisfies Record<CanaryField, z.ZodType>);

/** Every canary field after parsing; undefined when its annotation is absent. */
export type CanaryFields = z.output<typeof canaryFieldsSchema>;
