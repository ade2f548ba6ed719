// The one contract every annotation family follows, and the one runner that applies it, so that the
// admission webhook and the gateway parse, deny and warn identically.
import type { z } from "zod";
import { fail, ok, type FieldError, type Result } from "../result";
import { NGINX_ANNOTATION_PREFIX } from "../names";
import { annotationKey } from "./validators";

export type FamilyName =
  | "canary"
  | "cors"
  | "robots"
  | "redirect"
  | "proxy"
  | "rewrite"
  | "ingress-rollout"
  | "secret-rollout"
  | "version"
  | "referrer"
  | "source-range"
  | "rate-limit"
  | "upstream"
  | "url-redirect"
  | "host-names"
  | "error-pages"
  | "buffering"
  | "load-balancing"
  | "affinity"
  | "basic-auth"
  | "external-auth"
  | "http2";

/** One annotation of a family: its name under the prefix, what it takes, and a one-line doc. */
export interface AnnotationField {
  annotation: string;
  /** The kind of value, in words ("boolean", "integer (seconds)", "header list"). */
  type: string;
  /** What applies when the annotation is absent, in words; "" when nothing does. */
  default: string;
  doc: string;
  /** The Bulwark release that first read it; absent: the first release. */
  since?: string;
}

/**
 * A family: a table from schema field to annotation, and one zod schema over those fields. The
 * schema parses each field, then checks the rules between fields, then builds the config.
 */
export interface Family<T, F extends string = string> {
  name: FamilyName;
  fields: Readonly<Record<F, AnnotationField>>;
  schema: z.ZodType<T>;
  /** Legal but probably unintended settings, worded with full annotation keys. */
  warnings?(value: T, present: ReadonlySet<F>): string[];
}

/** `metadata.annotations["<key>"]`, the field a denial names. */
export function annotationPath(key: string): string {
  return `metadata.annotations[${JSON.stringify(key)}]`;
}

/** The full key of a family field, for messages. */
export function keyOf<F extends string>(
  family: Pick<Family<unknown, F>, "fields">,
  field: F,
): string {
  return annotationKey(family.fields[field].annotation);
}

/**
 * Runs one family over an object's annotations: undefined when none of its annotations is present,
 * otherwise the config, or every error of the family naming the full annotation key.
 */
export function parseFamily<T, F extends string>(
  family: Family<T, F>,
  annotations: Readonly<Record<string, string>> | undefined,
): Result<T | undefined> {
  const input: Record<string, string> = {};
  const present = new Set<F>();
  for (const field of Object.keys(family.fields) as F[]) {
    const raw = annotations?.[keyOf(family, field)];
    if (raw === undefined) continue;
    input[field] = raw;
    present.add(field);
  }
  if (present.size === 0) return ok(undefined);

  const parsed = family.schema.safeParse(input);
  if (!parsed.success) {
    return fail(parsed.error.issues.map(issue => toFieldError(family.fields, issue)));
  }
  return ok(parsed.data, family.warnings?.(parsed.data, present) ?? []);
}

function toFieldError<F extends string>(
  fields: Readonly<Record<F, AnnotationField>>,
  issue: z.core.$ZodIssue,
): FieldError {
  const field = issue.path[0];
  const known = typeof field === "string" && Object.hasOwn(fields, field);
  return {
    // Every issue is raised on a field; the prefix alone is only a guard against a schema bug.
    field: annotationPath(known ? keyOf({ fields }, field as F) : NGINX_ANNOTATION_PREFIX),
    message: issue.message,
  };
}
