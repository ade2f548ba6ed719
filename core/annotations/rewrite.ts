// ingress-nginx `rewrite-target` and `use-regex`. As in ingress-nginx (template.go,
// enforceRegexModifier), a rewrite-target makes the paths regular expressions whether or not
// use-regex is set, so "$1".."$9" always refer to the path's capture groups.
import { z } from "zod";
import { keyOf, parseFamily, type Family } from "./family";
import { annotation, bad, good, parseBool, type Parsed } from "./validators";
import type { Result } from "../result";

const fields = {
  target: {
    annotation: "rewrite-target",
    type: "URI",
    default: "",
    doc: 'Path the request is rewritten to; "$1".."$9" insert the path regex\'s capture groups.',
  },
  useRegex: {
    annotation: "use-regex",
    type: "boolean",
    default: "false",
    doc: "Treat the ingress's paths as case-insensitive regular expressions in RE2 syntax (implied by rewrite-target); each at most 512 characters and 5 000 RE2 instructions, 50 000 for all of the Ingress's paths; a request path too long for its host's patterns (500 000 steps, path length × instructions) is answered 414.",
  },
} as const;

// ingress-nginx's RegexPathWithCapture character set: nothing that nginx would read as a variable
// other than a capture reference.
const TARGET = /^\/?[-._~:a-zA-Z0-9/$]*$/;
const STRAY_DOLLAR = /\$(?![1-9])/;
const CAPTURE = /\$([1-9])/g;

export interface RewriteTarget {
  target: string;
  /** The capture groups the target refers to, ascending. */
  captureRefs: number[];
}

function parseTarget(raw: string): Parsed<RewriteTarget> {
  const expected = `a path of letters, digits, "-._~:/" and capture references "$1".."$9"`;
  if (raw === "" || !TARGET.test(raw)) return bad(expected, raw);
  if (STRAY_DOLLAR.test(raw)) return bad(expected, raw, `"$" must be followed by a digit 1-9`);
  const refs = new Set(Array.from(raw.matchAll(CAPTURE), m => Number(m[1])));
  return good({ target: raw, captureRefs: [...refs].sort((a, b) => a - b) });
}

export const rewriteSchema = z
  .object({
    target: annotation(parseTarget).optional(),
    useRegex: annotation(parseBool).optional(),
  } satisfies Record<keyof typeof fields, z.ZodType>)
  .transform(v => ({
    target: v.target?.target,
    captureRefs: v.target?.captureRefs ?? [],
    /** As set; undefined when absent. */
    useRegex: v.useRegex,
    /** Whether the paths are regular expressions: use-regex, or implied by a rewrite-target. */
    regexPaths: v.useRegex === true || v.target !== undefined,
  }));

export type RewriteConfig = z.output<typeof rewriteSchema>;

export const rewriteFamily: Family<RewriteConfig, keyof typeof fields> = {
  name: "rewrite",
  fields,
  schema: rewriteSchema,
  warnings: config =>
    config.useRegex === false && config.target !== undefined
      ? [
          `${keyOf(rewriteFamily, "useRegex")} is "false" but ${keyOf(rewriteFamily, "target")} ` +
            "makes the paths regular expressions anyway, as in ingress-nginx",
        ]
      : [],
};

export function parseRewrite(
  annotations: Readonly<Record<string, string>> | undefined,
): Result<RewriteConfig | undefined> {
  return parseFamily(rewriteFamily, annotations);
}
