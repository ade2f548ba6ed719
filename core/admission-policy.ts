// A ValidatingAdmissionPolicy with the binding that makes it deny. The API server evaluates it
// itself, so it holds while Bulwark's webhooks are down; failurePolicy Fail, since a policy that
// cannot be evaluated must not let the write through.

/** A CEL list literal of strings that need no escaping beyond their quotes (names, users). */
export function celStringList(values: readonly string[]): string {
  return `[${values.map(value => `'${value}'`).join(", ")}]`;
}

export function denyingPolicy(name: string, spec: Record<string, unknown>) {
  return [
    {
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "ValidatingAdmissionPolicy",
      metadata: { name },
      spec: { failurePolicy: "Fail", ...spec },
    },
    {
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "ValidatingAdmissionPolicyBinding",
      metadata: { name },
      spec: { policyName: name, validationActions: ["Deny"] },
    },
  ];
}
