// Validation of an Ingress's spec as the gateway will serve it. The API server has already
// checked the basic shape; this adds what Bulwark's gateway needs and names every field.
import { hostProblem } from "./hostname";
import type { FieldError } from "../result";
import type { HTTPIngressPath, Ingress, IngressBackend, IngressTLS, ServiceBackend } from "./types";
import { MAX_INGRESS_PATTERN_INSTRUCTIONS, PathPatternBudget } from "../patterns/linear-regex";

const DNS_1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const PORT_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const PATH_TYPES = new Set(["Exact", "Prefix", "ImplementationSpecific"]);

export interface SpecOptions {
  /** `use-regex` (or a rewrite-target): every path but an Exact one is a regular expression that must compile. */
  useRegex?: boolean;
  /** A rewrite-target: its capture groups come from the path, so an Exact path must compile too. */
  rewrites?: boolean;
}

export interface SpecReport {
  errors: FieldError[];
  warnings: string[];
}

function serviceNameProblem(name: string | undefined): string | undefined {
  if (name && name.length <= 63 && DNS_1035_LABEL.test(name)) return undefined;
  return `must be a Service name (RFC 1035 label), got ${JSON.stringify(name ?? "")}`;
}

function portProblem(port: ServiceBackend["port"]): [string, string] | undefined {
  if (port?.number !== undefined) {
    const valid = Number.isInteger(port.number) && port.number >= 1 && port.number <= 65535;
    return valid ? undefined : ["port.number", `must be 1..65535, got ${port.number}`];
  }
  if (port?.name && port.name.length <= 15 && PORT_NAME.test(port.name)) return undefined;
  return ["port", "needs a number (1..65535) or a port name (IANA service name)"];
}

function backendProblems(backend: IngressBackend, field: string): FieldError[] {
  if (backend.resource) {
    return [
      {
        field: `${field}.resource`,
        message: "resource backends are not served; route to a Service",
      },
    ];
  }
  const service = backend.service;
  if (!service) return [{ field: `${field}.service`, message: "is required" }];
  const errors: FieldError[] = [];
  const nameProblem = serviceNameProblem(service.name);
  if (nameProblem) errors.push({ field: `${field}.service.name`, message: nameProblem });
  const port = portProblem(service.port);
  if (port) errors.push({ field: `${field}.service.${port[0]}`, message: port[1] });
  return errors;
}

function regexPathProblems(value: string, field: string, budget: PathPatternBudget): FieldError[] {
  const admitted = budget.admit(value);
  if (admitted.spent) return [];
  const check = admitted.check;
  if (!check.ok) {
    const message = check.tooLarge
      ? `is a regular expression (use-regex is on) that ${check.problem}`
      : `is not a valid regular expression in RE2 syntax (use-regex is on): ${check.problem}`;
    return [{ field, message }];
  }
  if (!admitted.crossed) return [];
  return [
    {
      field,
      message: `brings this Ingress's regular expressions to more than ${MAX_INGRESS_PATTERN_INSTRUCTIONS} RE2 instructions together (use-regex is on): every gateway worker keeps them; simplify the paths or split them across Ingresses`,
    },
  ];
}

function pathProblems(
  path: HTTPIngressPath,
  field: string,
  options: SpecOptions,
  budget: PathPatternBudget,
): FieldError[] {
  const errors: FieldError[] = [];
  const type = path.pathType;
  if (!type || !PATH_TYPES.has(type)) {
    errors.push({
      field: `${field}.pathType`,
      message: `must be Exact, Prefix or ImplementationSpecific, got ${JSON.stringify(type ?? "")}`,
    });
  }
  const value = path.path ?? "/";
  // As the gateway serves them: with use-regex, every path but an Exact one is a regex; with a
  // rewrite-target, an Exact one too (for its capture groups).
  if (options.useRegex && (type !== "Exact" || options.rewrites)) {
    errors.push(...regexPathProblems(value, `${field}.path`, budget));
  } else if (!value.startsWith("/")) {
    errors.push({
      field: `${field}.path`,
      message: `must start with '/', got ${JSON.stringify(value)}`,
    });
  } else if (/[\s?#]/.test(value)) {
    errors.push({
      field: `${field}.path`,
      message: "must not contain whitespace, '?' or '#': requests are matched on the path alone",
    });
  }
  if (path.backend) errors.push(...backendProblems(path.backend, `${field}.backend`));
  else errors.push({ field: `${field}.backend`, message: "is required" });
  return errors;
}

function tlsProblems(tls: IngressTLS, field: string): FieldError[] {
  const errors: FieldError[] = [];
  for (const [index, host] of (tls.hosts ?? []).entries()) {
    const problem = hostProblem(host);
    if (problem)
      errors.push({
        field: `${field}.hosts[${index}]`,
        message: `${JSON.stringify(host)}: ${problem}`,
      });
  }
  if (!tls.secretName)
    errors.push({
      field: `${field}.secretName`,
      message: "is required: Bulwark has no default certificate",
    });
  return errors;
}

function rulesReport(ingress: Ingress, options: SpecOptions): FieldError[] {
  const errors: FieldError[] = [];
  const seen = new Map<string, string>();
  const budget = new PathPatternBudget();
  for (const [i, rule] of (ingress.spec?.rules ?? []).entries()) {
    const field = `spec.rules[${i}]`;
    const hostError = rule.host === undefined ? undefined : hostProblem(rule.host);
    if (hostError)
      errors.push({
        field: `${field}.host`,
        message: `${JSON.stringify(rule.host)}: ${hostError}`,
      });
    for (const [j, path] of (rule.http?.paths ?? []).entries()) {
      const pathField = `${field}.http.paths[${j}]`;
      errors.push(...pathProblems(path, pathField, options, budget));
      const key = `${rule.host ?? ""} ${path.pathType} ${path.path ?? "/"}`;
      const first = seen.get(key);
      if (first)
        errors.push({
          field: pathField,
          message: `repeats ${first} (same host, path and pathType)`,
        });
      else seen.set(key, pathField);
    }
  }
  return errors;
}

function unroutedTlsHosts(ingress: Ingress): string[] {
  const ruleHosts = new Set((ingress.spec?.rules ?? []).map(r => r.host ?? ""));
  return (ingress.spec?.tls ?? []).flatMap((tls, k) =>
    (tls.hosts ?? [])
      .filter(host => !ruleHosts.has(host))
      .map(
        host =>
          `spec.tls[${k}].hosts: ${host} has no rule in this Ingress; its certificate serves no route`,
      ),
  );
}

/** Every problem in the spec, each naming its field; warnings for what is legal but likely a mistake. */
export function validateIngressSpec(ingress: Ingress, options: SpecOptions = {}): SpecReport {
  const spec = ingress.spec ?? {};
  const errors = rulesReport(ingress, options);
  if (spec.defaultBackend)
    errors.push(...backendProblems(spec.defaultBackend, "spec.defaultBackend"));
  if (!spec.defaultBackend && (spec.rules ?? []).length === 0) {
    errors.push({ field: "spec", message: "needs rules or a defaultBackend" });
  }
  (spec.tls ?? []).forEach((tls, k) => errors.push(...tlsProblems(tls, `spec.tls[${k}]`)));
  return { errors, warnings: unroutedTlsHosts(ingress) };
}
