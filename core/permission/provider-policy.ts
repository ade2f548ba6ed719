// Who may use a PermissionProvider, and for what: its namespaceSelector (metav1.LabelSelector,
// with apimachinery's semantics) and its allowedParams (glob patterns the database or resource
// must match). Checked where a group is resolved: at admission and again at grant time, so a
// group admitted before the policy changed is refused when it is used.
import { z } from "zod";

const OPERATORS = ["In", "NotIn", "Exists", "DoesNotExist"] as const;

export const labelSelectorSchema = z
  .strictObject({
    matchLabels: z.record(z.string(), z.string()).optional(),
    matchExpressions: z
      .array(
        z.strictObject({
          key: z.string().min(1),
          operator: z.enum(OPERATORS),
          values: z.array(z.string()).optional(),
        }),
      )
      .optional(),
  })
  .superRefine((selector, ctx) => {
    // As apimachinery's ValidateLabelSelectorRequirement: In/NotIn need values, the others none.
    for (const [index, requirement] of (selector.matchExpressions ?? []).entries()) {
      const needs = requirement.operator === "In" || requirement.operator === "NotIn";
      const count = requirement.values?.length ?? 0;
      if (needs === count > 0) continue;
      ctx.addIssue({
        code: "custom",
        path: ["matchExpressions", index, "values"],
        message: needs
          ? `must be non-empty when operator is ${requirement.operator}`
          : `must be empty when operator is ${requirement.operator}`,
      });
    }
  });
export type LabelSelector = z.infer<typeof labelSelectorSchema>;

/** Whether `labels` match: every matchLabels pair and every requirement (an empty selector: all). */
export function selectorMatches(
  selector: LabelSelector,
  labels: Readonly<Record<string, string>>,
): boolean {
  const pairs = Object.entries(selector.matchLabels ?? {});
  if (!pairs.every(([key, value]) => labels[key] === value)) return false;
  return (selector.matchExpressions ?? []).every(({ key, operator, values = [] }) => {
    const has = Object.hasOwn(labels, key);
    if (operator === "Exists") return has;
    if (operator === "DoesNotExist") return !has;
    if (operator === "In") return has && values.includes(labels[key]!);
    return !has || !values.includes(labels[key]!);
  });
}

/** `*` matches any run of characters; nothing else is special. */
const PATTERN = /^[A-Za-z0-9_.:/*-]{1,128}$/;
const pattern = z
  .string()
  .regex(PATTERN, "must be 1-128 letters, digits, '_', '.', ':', '/', '-' or the wildcard '*'");

export const allowedParamsSchema = z.strictObject({
  /** mysql: the databases a group may name. */
  databases: z.array(pattern).min(1).optional(),
  /** http: the resources a group may name. */
  resources: z.array(pattern).min(1).optional(),
});
export type AllowedParams = z.infer<typeof allowedParamsSchema>;

/**
 * Whether `value` matches `glob` (`*` any run of characters, the rest literally): greedy, going
 * back only to the last `*`, so at most glob × value steps. A glob turned into a regular
 * expression (`^a.*a.*…$`) backtracks once per `*` on a value that fails late: seven stars
 * against a tenant's 120-character resource took six minutes.
 */
export function globMatches(glob: string, value: string): boolean {
  let g = 0;
  let v = 0;
  // The last star seen, and where in `value` the run it covers ends now.
  let star = -1;
  let covered = 0;
  while (v < value.length) {
    if (glob[g] === "*") {
      star = g++;
      covered = v;
    } else if (g < glob.length && glob[g] === value[v]) {
      g++;
      v++;
    } else if (star >= 0) {
      g = star + 1;
      v = ++covered;
    } else {
      return false;
    }
  }
  while (glob[g] === "*") g++;
  return g === glob.length;
}

/** The provider's policy as a group's resolution needs it. */
export interface ProviderPolicy {
  namespaceSelector?: LabelSelector;
  allowedParams?: AllowedParams;
}

/** The namespace a group is in, as the policy needs it. */
export interface GroupNamespace {
  name: string;
  labels: Readonly<Record<string, string>>;
}

/** Why the provider may not be used from `namespace`, or undefined when it may. */
export function namespaceRefusal(
  provider: string,
  policy: ProviderPolicy,
  namespace: GroupNamespace,
): string | undefined {
  if (!policy.namespaceSelector || selectorMatches(policy.namespaceSelector, namespace.labels))
    return undefined;
  return `provider ${JSON.stringify(provider)} may not be used in namespace ${namespace.name}: its labels do not match the provider's spec.namespaceSelector`;
}

/** Why `value` (a database or resource) is outside the provider's allowedParams, if it is. */
export function paramRefusal(
  allowed: readonly string[] | undefined,
  value: string,
  provider: string,
): string | undefined {
  if (allowed === undefined || allowed.some(glob => globMatches(glob, value))) return undefined;
  return `${JSON.stringify(value)} is not allowed by provider ${JSON.stringify(provider)} (spec.allowedParams: ${allowed.join(", ")})`;
}
