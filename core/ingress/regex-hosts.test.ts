import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { IngressesByHost, PathVerdicts, reviewRegexHosts } from "./regex-hosts";
import type { Ingress } from "./types";
import { PathPatternBudget } from "../patterns/linear-regex";

const P = "nginx.ingress.kubernetes.io/";
const backend = { service: { name: "web", port: { number: 80 } } };
type PathSpec = { path: string; type?: "Exact" | "Prefix" | "ImplementationSpecific" };

function ingress(
  name: string,
  paths: PathSpec[],
  annotations: Record<string, string> = {},
  host = "shop.example.com",
): Ingress {
  return {
    metadata: { name, namespace: "shop", annotations },
    spec: {
      ingressClassName: "bulwark",
      rules: [
        {
          host,
          http: {
            paths: paths.map(p => ({ path: p.path, pathType: p.type ?? "Prefix", backend })),
          },
        },
      ],
    },
  };
}

const REGEX = { [`${P}use-regex`]: "true" };
const regexIngress = ingress("regex", [{ path: "/api/.*" }], REGEX);

function review(
  write: Ingress,
  others: Ingress[],
  previous?: Ingress,
  verdicts = new PathVerdicts(),
) {
  return reviewRegexHosts(write, previous, () => others, verdicts);
}

describe("reviewRegexHosts", () => {
  it("refuses a plain Prefix path that is no regex on a host another Ingress makes regex, naming both", () => {
    const result = review(ingress("plain", [{ path: "/ok" }, { path: "/a(b" }]), [regexIngress]);
    assert.deepEqual(result.errors, [
      {
        field: "spec.rules[0].http.paths[1].path",
        message:
          'is served as a regular expression on host "shop.example.com", where Ingress shop/regex has use-regex or rewrite-target (as in ingress-nginx, that makes every path of the host but Exact ones a regular expression), and as one it is not valid RE2 syntax: error parsing regexp: missing closing ): `(?i)^/a(b`',
      },
    ]);
    assert.deepEqual(result.warnings, []);
  });

  it("leaves Exact paths alone, and hosts no regex Ingress is on", () => {
    assert.deepEqual(
      review(ingress("plain", [{ path: "/a(b", type: "Exact" }]), [regexIngress]).errors,
      [],
    );
    const elsewhere = ingress("regex", [{ path: "/api/.*" }], REGEX, "other.example.com");
    assert.deepEqual(review(ingress("plain", [{ path: "/a(b" }]), []).errors, []);
    // The caller hands only the host's neighbours; one on another host is none.
    assert.deepEqual(
      reviewRegexHosts(
        ingress("plain", [{ path: "/a(b" }]),
        undefined,
        h => (h === "other.example.com" ? [elsewhere] : []),
        new PathVerdicts(),
      ).errors,
      [],
    );
  });

  it("refuses only new paths on an update: one that was there before stays", () => {
    const before = ingress("plain", [{ path: "/a(b" }]);
    const after = ingress("plain", [{ path: "/a(b" }, { path: "/c[d" }]);
    const result = review(after, [regexIngress], before);
    assert.deepEqual(
      result.errors.map(e => e.field),
      ["spec.rules[0].http.paths[1].path"],
    );
    assert.deepEqual(review(before, [regexIngress], before).errors, []);
  });

  it("refuses the write that makes a host regex when another Ingress's path there is none, on the annotation that does", () => {
    const plain = ingress("plain", [{ path: "/a(b" }, { path: "/x)", type: "Exact" }]);
    const result = review(regexIngress, [plain]);
    assert.deepEqual(result.errors, [
      {
        field: `metadata.annotations["${P}use-regex"]`,
        message:
          'makes every path of host "shop.example.com" but Exact ones a regular expression (as in ingress-nginx), and Ingress shop/plain\'s path "/a(b" is none: as one it is not valid RE2 syntax: error parsing regexp: missing closing ): `(?i)^/a(b`',
      },
    ]);
    const rewrite = ingress("rewrite", [{ path: "/api(/|$)(.*)" }], {
      [`${P}rewrite-target`]: "/$2",
    });
    assert.deepEqual(
      review(rewrite, [plain]).errors.map(e => e.field),
      [`metadata.annotations["${P}rewrite-target"]`],
    );
  });

  it("does not refuse what was broken before this write: an update of the Ingress that made the host regex, or a host another made regex", () => {
    const plain = ingress("plain", [{ path: "/a(b" }]);
    assert.deepEqual(review(regexIngress, [plain], regexIngress).errors, []);
    const other = ingress("other-regex", [{ path: "/v[0-9]+" }], REGEX);
    assert.deepEqual(review(regexIngress, [plain, other]).errors, []);
  });

  it("counts a regex Ingress with only Exact paths on the host as not making it regex", () => {
    const exactOnly = ingress("regex", [{ path: "/api", type: "Exact" }], REGEX);
    const plain = ingress("plain", [{ path: "/a(b" }]);
    assert.deepEqual(review(exactOnly, [plain]).errors, []);
    assert.deepEqual(review(plain, [exactOnly]).errors, []);
    // Its previous version had a Prefix path there: this write is not the one that made it regex.
    assert.deepEqual(review(regexIngress, [plain], exactOnly).errors.length, 1);
  });

  it("leaves canaries alone: their paths attach to their main's routes, never regexes", () => {
    const canary = ingress("canary", [{ path: "/a(b" }], {
      [`${P}canary`]: "true",
      [`${P}canary-weight`]: "10",
    });
    assert.deepEqual(review(canary, [regexIngress]).errors, []);
  });

  it("counts a canary turned main as the write that makes the host regex: as a canary it made nothing regex", () => {
    const plain = ingress("plain", [{ path: "/a(b" }]);
    const wasCanary = ingress("regex", [{ path: "/api/.*" }], { ...REGEX, [`${P}canary`]: "true" });
    assert.equal(review(regexIngress, [plain], wasCanary).errors.length, 1);
  });

  it("names at most five neighbour paths, and counts the rest", () => {
    const plains = Array.from({ length: 8 }, (_, k) =>
      ingress(`plain-${k}`, [{ path: `/a${k}(b` }]),
    );
    const { errors } = review(regexIngress, plains);
    assert.equal(errors.length, 5);
    assert.match(errors[0]!.message, /shop\/plain-0's path "\/a0\(b"/);
    assert.match(
      errors[4]!.message,
      /shop\/plain-4's path "\/a4\(b" is none: .*; and 3 more such paths$/,
    );
  });

  it("compiles on one Ingress's budget per review, and remembers verdicts across reviews", () => {
    // 72 005 instructions each, some 90 ms to find out: one is compiled per review, not twenty.
    const hostile = (k: number) => `/${k}${"a{1000}".repeat(72)}`;
    const plains = Array.from({ length: 20 }, (_, k) =>
      ingress(`plain-${k}`, [{ path: hostile(k) }]),
    );
    const verdicts = new PathVerdicts();
    const first = review(regexIngress, plains, undefined, verdicts);
    assert.equal(first.errors.length, 1);
    assert.match(
      first.errors[0]!.message,
      /compiles to 72005 RE2 instructions, more than the 5000/,
    );
    assert.deepEqual(first.warnings, [
      "19 paths on this Ingress's hosts were not checked as regular expressions (more than one review compiles); the gateway leaves out any that is not one and reports it on /healthz",
    ]);
    const second = review(regexIngress, plains, undefined, verdicts);
    assert.equal(second.errors.length, 2, "the first verdict remembered, one more compiled");
    assert.match(second.warnings[0] ?? "", /^18 paths/);
  });
});

describe("PathVerdicts", () => {
  it("answers from memory without spending the budget, and forgets everything when full rather than growing", () => {
    const spent = () => {
      const budget = new PathPatternBudget();
      budget.check(`/${"a{1000}".repeat(10)}`);
      assert.ok(budget.spent);
      return budget;
    };
    const verdicts = new PathVerdicts(2);
    assert.equal(verdicts.verdict("/a", new PathPatternBudget()), undefined);
    assert.match(String(verdicts.verdict("/b(", new PathPatternBudget())), /not valid RE2 syntax/);
    assert.equal(verdicts.verdict("/a", spent()), undefined, "remembered");
    assert.equal(verdicts.verdict("/c", new PathPatternBudget()), undefined);
    assert.equal(typeof verdicts.verdict("/a", spent()), "symbol", "forgotten: not checked");
  });
});

describe("IngressesByHost", () => {
  it("finds an Ingress by each host of its rules, follows updates and deletes, and leaves out the one asked for", () => {
    const index = new IngressesByHost();
    const a = ingress("a", [{ path: "/" }]);
    const b = ingress("b", [{ path: "/" }], {}, "other.example.com");
    index.put(a);
    index.put(b);
    assert.deepEqual(
      index.on("shop.example.com", "shop/b").map(i => i.metadata?.name),
      ["a"],
    );
    assert.deepEqual(index.on("shop.example.com", "shop/a"), []);
    index.put(ingress("a", [{ path: "/" }], {}, "other.example.com"));
    assert.deepEqual(index.on("shop.example.com", ""), []);
    assert.deepEqual(
      index
        .on("other.example.com", "")
        .map(i => i.metadata?.name)
        .sort(),
      ["a", "b"],
    );
    index.remove(b);
    assert.deepEqual(
      index.on("other.example.com", "").map(i => i.metadata?.name),
      ["a"],
    );
    const kept = index.on("other.example.com", "")[0]!;
    assert.deepEqual(Object.keys(kept.metadata ?? {}).sort(), ["annotations", "name", "namespace"]);
  });
});
