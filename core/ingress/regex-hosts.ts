// A host's paths are one nginx server: as in ingress-nginx, one Ingress with use-regex (or a
// rewrite-target) on a host makes every path of that host a regular expression, other Ingresses'
// paths too. A path that is then no valid pattern fails ingress-nginx's whole configuration, so
// its admission refuses the write. Bulwark's gateway leaves such a path out and reports it; this
// refuses the write that would break one, and only that: a path already broken by an earlier
// write does not block an unrelated change.
import { isCanaryIngress } from "../annotations";
import { annotationPath, keyOf } from "../annotations/family";
import { parseRewrite, rewriteFamily } from "../annotations/rewrite";
import { objectKey } from "../object-key";
import { PathPatternBudget } from "../patterns/linear-regex";
import { quote, type FieldError } from "../result";
import type { Ingress } from "./types";

// By object: a watch's copies are asked at every review of their hosts, and parsed once.
const regexPathsMemo = new WeakMap<Ingress, boolean>();

/** Whether the Ingress's own non-Exact paths are regular expressions (use-regex, rewrite-target). */
export function makesRegexPaths(ingress: Ingress): boolean {
  let found = regexPathsMemo.get(ingress);
  if (found === undefined) {
    const rewrite = parseRewrite(ingress.metadata?.annotations);
    found = rewrite.ok && rewrite.value?.regexPaths === true;
    regexPathsMemo.set(ingress, found);
  }
  return found;
}

/** The paths of `ingress` on `host` that become regexes on a regex host: all but Exact ones. */
function pathsOn(ingress: Ingress | undefined, host: string): { path: string; field: string }[] {
  const found: { path: string; field: string }[] = [];
  for (const [i, rule] of (ingress?.spec?.rules ?? []).entries()) {
    if ((rule.host ?? "") !== host) continue;
    for (const [j, path] of (rule.http?.paths ?? []).entries()) {
      if (path.pathType === "Exact") continue;
      found.push({ path: path.path ?? "/", field: `spec.rules[${i}].http.paths[${j}].path` });
    }
  }
  return found;
}

/**
 * Whether `ingress` makes `host` a regex host: a main Ingress (a canary's paths attach to its
 * main's routes) with regex paths, one of them on the host.
 */
function makesHostRegex(ingress: Ingress, host: string): boolean {
  if (isCanaryIngress(ingress.metadata?.annotations)) return false;
  return makesRegexPaths(ingress) && pathsOn(ingress, host).length > 0;
}

/** The hosts of an Ingress's rules ("" for a rule without one), each once. */
export function hostsOf(ingress: Ingress): string[] {
  return [...new Set((ingress.spec?.rules ?? []).map(rule => rule.host ?? ""))];
}

/** Not checked: the review's compile budget ran out first. */
const UNCHECKED = Symbol("unchecked");

/**
 * Whether paths compile as the gateway's regexes, remembered by path (a process keeps one), so
 * a host's paths are compiled once, not at every review. Each review compiles new paths on a
 * budget of its own, as one Ingress's regex paths are: thousands of hostile paths cost a
 * review at most one Ingress's worth.
 */
export class PathVerdicts {
  readonly #verdicts = new Map<string, string | undefined>();
  readonly #capacity: number;

  constructor(capacity = 10_000) {
    this.#capacity = capacity;
  }

  /** Why `path` is no pattern the gateway runs (undefined: it is one), or UNCHECKED. */
  verdict(path: string, budget: PathPatternBudget): string | undefined | typeof UNCHECKED {
    if (this.#verdicts.has(path)) return this.#verdicts.get(path);
    const admitted = budget.admit(path);
    if (admitted.spent) return UNCHECKED;
    const check = admitted.check;
    const verdict = check.ok
      ? undefined
      : check.tooLarge
        ? check.problem
        : `is not valid RE2 syntax: ${check.problem}`;
    if (this.#verdicts.size >= this.#capacity) this.#verdicts.clear();
    this.#verdicts.set(path, verdict);
    return verdict;
  }
}

export interface RegexHostReview {
  errors: FieldError[];
  warnings: string[];
}

/** The most neighbour paths one review names: the rest are counted. */
const MAX_NAMED = 5;

/** One review's checks: its budget, and what it found. */
class HostChecks {
  readonly errors: FieldError[] = [];
  readonly #budget = new PathPatternBudget();
  #unchecked = 0;

  constructor(readonly verdicts: PathVerdicts) {}

  /** Records `error(verdict)` when `path` is no pattern the gateway runs. */
  check(path: string, error: (verdict: string) => FieldError): void {
    const verdict = this.verdicts.verdict(path, this.#budget);
    if (verdict === UNCHECKED) this.#unchecked++;
    else if (verdict !== undefined) this.errors.push(error(verdict));
  }

  review(): RegexHostReview {
    const warnings =
      this.#unchecked === 0
        ? []
        : [
            `${this.#unchecked} paths on this Ingress's hosts were not checked as regular expressions (more than one review compiles); the gateway leaves out any that is not one and reports it on /healthz`,
          ];
    return { errors: namedFirst(this.errors), warnings };
  }
}

/**
 * What writing `ingress` (over `previous`, on an update of an Ingress Bulwark served) breaks on
 * its hosts. `neighbours(host)`: the other Ingresses served on `host`, canaries left out (their
 * paths are never regexes).
 */
export function reviewRegexHosts(
  ingress: Ingress,
  previous: Ingress | undefined,
  neighbours: (host: string) => readonly Ingress[],
  verdicts: PathVerdicts,
): RegexHostReview {
  const checks = new HostChecks(verdicts);
  if (isCanaryIngress(ingress.metadata?.annotations)) return checks.review();
  for (const host of hostsOf(ingress)) {
    const others = neighbours(host);
    const maker = others.find(other => makesHostRegex(other, host));
    if (maker === undefined) checkMadeRegex(checks, { ingress, previous, host, others });
    else if (!makesRegexPaths(ingress)) checkBroughtOn(checks, { ingress, previous, host, maker });
  }
  return checks.review();
}

/**
 * The write that makes `host` a regex host (unless its previous version did already): every
 * other Ingress's paths there become regexes.
 */
function checkMadeRegex(
  checks: HostChecks,
  write: {
    ingress: Ingress;
    previous: Ingress | undefined;
    host: string;
    others: readonly Ingress[];
  },
): void {
  const { ingress, previous, host } = write;
  if (!makesHostRegex(ingress, host)) return;
  if (previous !== undefined && makesHostRegex(previous, host)) return;
  for (const other of write.others) {
    for (const { path } of pathsOn(other, host))
      checks.check(path, verdict => neighbourError(ingress, { host, other, path, verdict }));
  }
}

/** The write's own paths new on a regex host: it brings them there, as regexes. */
function checkBroughtOn(
  checks: HostChecks,
  write: { ingress: Ingress; previous: Ingress | undefined; host: string; maker: Ingress },
): void {
  const { host, maker } = write;
  const known = new Set(pathsOn(write.previous, host).map(p => p.path));
  for (const { path, field } of pathsOn(write.ingress, host)) {
    if (!known.has(path)) checks.check(path, verdict => ownError(field, host, maker, verdict));
  }
}

function ownError(field: string, host: string, maker: Ingress, verdict: string): FieldError {
  return {
    field,
    message: `is served as a regular expression on host ${quote(host)}, where Ingress ${objectKey(maker)} has use-regex or rewrite-target (as in ingress-nginx, that makes every path of the host but Exact ones a regular expression), and as one it ${verdict}`,
  };
}

function regexAnnotationField(ingress: Ingress): string {
  const annotations = ingress.metadata?.annotations ?? {};
  const target = keyOf(rewriteFamily, "target");
  return annotationPath(target in annotations ? target : keyOf(rewriteFamily, "useRegex"));
}

function neighbourError(
  ingress: Ingress,
  found: { host: string; other: Ingress; path: string; verdict: string },
): FieldError {
  return {
    field: regexAnnotationField(ingress),
    message: `makes every path of host ${quote(found.host)} but Exact ones a regular expression (as in ingress-nginx), and Ingress ${objectKey(found.other)}'s path ${quote(found.path)} is none: as one it ${found.verdict}`,
  };
}

/** The Ingress's own errors, then at most MAX_NAMED of those naming other Ingresses' paths. */
function namedFirst(errors: FieldError[]): FieldError[] {
  const own = errors.filter(e => e.field.startsWith("spec."));
  const neighbours = errors.filter(e => !e.field.startsWith("spec."));
  if (neighbours.length <= MAX_NAMED) return [...own, ...neighbours];
  const rest = neighbours.length - MAX_NAMED;
  const last = neighbours[MAX_NAMED - 1]!;
  return [
    ...own,
    ...neighbours.slice(0, MAX_NAMED - 1),
    { field: last.field, message: `${last.message}; and ${rest} more such paths` },
  ];
}

/** Ingresses by the hosts of their rules, fed by a watch: what reviewRegexHosts's `neighbours` reads. */
export class IngressesByHost {
  readonly #ingresses = new Map<string, Ingress>();
  readonly #byHost = new Map<string, Set<string>>();

  put(ingress: Ingress): void {
    this.remove(ingress);
    if ((ingress.spec?.rules ?? []).length === 0) return;
    const key = objectKey(ingress);
    // What selection and the review read: no managedFields, status, labels or TLS.
    const { name, namespace, annotations } = ingress.metadata ?? {};
    const { ingressClassName, rules } = ingress.spec ?? {};
    this.#ingresses.set(key, {
      metadata: { name, namespace, annotations },
      spec: { ingressClassName, rules },
    });
    for (const host of hostsOf(ingress)) {
      const keys = this.#byHost.get(host) ?? new Set<string>();
      keys.add(key);
      this.#byHost.set(host, keys);
    }
  }

  remove(ingress: Ingress): void {
    const key = objectKey(ingress);
    const previous = this.#ingresses.get(key);
    if (previous === undefined) return;
    this.#ingresses.delete(key);
    for (const host of hostsOf(previous)) {
      const keys = this.#byHost.get(host);
      keys?.delete(key);
      if (keys?.size === 0) this.#byHost.delete(host);
    }
  }

  /** The Ingresses with a rule on `host`, but the one keyed `except` (namespace/name). */
  on(host: string, except: string): Ingress[] {
    const keys = this.#byHost.get(host) ?? [];
    return [...keys].flatMap(k => (k === except ? [] : (this.#ingresses.get(k) ?? [])));
  }
}
