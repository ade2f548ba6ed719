// A ValidatingAdmissionPolicy with the binding that makes it deny. The API server evaluates it
// itself, so it holds while Bulwark's webhooks are down; failurePolicy Fail, since a policy that
// cannot be evaluated must not let the write through.
//
// Its rules are written as match conditions that find a broken rule, behind one validation that
// always refuses, not as one validation per rule. The API server converts the whole object for
// each CEL activation (k8s.io/apiserver 1.35, admission/plugin/cel/activation.go): one for the
// match conditions and, once they match, three more (validations, messageExpressions and audit
// annotations, each its own activation even when it has no expressions). With the rules as
// validations every write in scope paid four conversions of the object; now a write that breaks
// no rule pays one, and only a refused write pays four. A match condition that fails to
// evaluate refuses the write, as a failed validation does (failurePolicy Fail).

/** A CEL list literal of strings that need no escaping beyond their quotes (names, users). */
export function celStringList(values: readonly string[]): string {
  return `[${values.map(value => `'${value}'`).join(", ")}]`;
}

/** A CEL string literal of any text. */
export function celString(text: string): string {
  return `'${text.replaceAll("\\", "\\\\").replaceAll("'", "\\'")}'`;
}

/** One rule: the CEL condition under which a write breaks it, and what its refusal says. */
export type PolicyRule = { broken: string } & (
  | { message: string }
  | { /** CEL that yields the refusal's text. */ messageExpression: string }
);

export interface DenyingPolicySpec {
  matchConstraints: Record<string, unknown>;
  /** Match conditions (CEL on the request) that bound which writes the rules apply to. */
  scope?: { name: string; expression: string }[];
  /** In order: a write that breaks several is refused with the first one's message. */
  rules: readonly PolicyRule[];
  reason: "Invalid" | "Forbidden";
}

const textOf = (rule: PolicyRule): string =>
  "message" in rule ? celString(rule.message) : rule.messageExpression;

/** The first broken rule's message: `a ? m1 : b ? m2 : m3` (the match found one broken). */
function firstBrokenMessage(rules: readonly PolicyRule[]): string {
  const last = rules[rules.length - 1]!;
  return rules
    .slice(0, -1)
    .reduceRight(
      (otherwise, rule) => `(${rule.broken}) ? ${textOf(rule)} : (${otherwise})`,
      textOf(last),
    );
}

export function denyingPolicy(
  name: string,
  { matchConstraints, scope = [], rules, reason }: DenyingPolicySpec,
) {
  if (rules.length === 0) throw new Error(`policy ${name}: no rules`);
  const breaksARule = rules.map(rule => `(${rule.broken})`).join(" || ");
  return [
    {
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "ValidatingAdmissionPolicy",
      metadata: { name },
      spec: {
        failurePolicy: "Fail",
        matchConstraints,
        matchConditions: [...scope, { name: "breaks-a-rule", expression: breaksARule }],
        validations: [
          {
            expression: "false",
            messageExpression: firstBrokenMessage(rules),
            // What the API server says if the messageExpression cannot be evaluated (its
            // refusal names the policy already).
            message:
              "refused: a rule of this policy is broken (its message could not be evaluated)",
            reason,
          },
        ],
      },
    },
    {
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "ValidatingAdmissionPolicyBinding",
      metadata: { name },
      spec: { policyName: name, validationActions: ["Deny"] },
    },
  ];
}
