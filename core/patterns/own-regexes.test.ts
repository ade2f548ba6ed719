// Every regular expression literal in Bulwark's own code runs on V8's backtracking engine, and
// most of them read what tenants and clients write (annotations, Secrets, headers). One that
// backtracks polynomially is a denial of service: /[ \t]+$/ on a line of 40 000 tabs before a
// letter took 2.9 s. recheck (a ReDoS checker nobody here wrote) must find each one safe.
// User-supplied expressions are another matter: they run on RE2 (linear-regex.ts).
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import ts from "typescript";
import { checkSync } from "recheck";

const ROOT = join(__dirname, "..", "..");
// Not deployed: the tests and their harness, the benchmarks and local tools.
const NOT_SHIPPED = new Set(["node_modules", "dist", "build", "test", "hack", ".git"]);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap(entry => {
    const path = join(dir, entry);
    if (NOT_SHIPPED.has(entry) || entry.startsWith(".")) return [];
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return entry.endsWith(".ts") && !entry.endsWith(".test.ts") ? [path] : [];
  });
}

interface Literal {
  where: string;
  source: string;
  flags: string;
}

/** Where `path` builds a RegExp at run time (`new RegExp(…)` or `RegExp(…)`). */
function builtRegexes(path: string): string[] {
  const file = ts.createSourceFile(path, readFileSync(path, "utf8"), ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (
      (ts.isNewExpression(node) || ts.isCallExpression(node)) &&
      ts.isIdentifier(node.expression) &&
      node.expression.text === "RegExp"
    ) {
      const { line } = file.getLineAndCharacterOfPosition(node.getStart(file));
      found.push(`${relative(ROOT, path)}:${line + 1}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

// Built from the chart's own fixed keys at build time, never from input.
const BUILT_FROM_CONSTANTS = ["packaging/manifests/pepr-chart.ts"];

function regexLiterals(path: string): Literal[] {
  const file = ts.createSourceFile(path, readFileSync(path, "utf8"), ts.ScriptTarget.Latest, true);
  const found: Literal[] = [];
  const visit = (node: ts.Node): void => {
    if (node.kind === ts.SyntaxKind.RegularExpressionLiteral) {
      const text = node.getText(file);
      const slash = text.lastIndexOf("/");
      const { line } = file.getLineAndCharacterOfPosition(node.getStart(file));
      found.push({
        where: `${relative(ROOT, path)}:${line + 1}`,
        source: text.slice(1, slash),
        flags: text.slice(slash + 1),
      });
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

/** recheck's verdict in a line: "safe", or what is wrong and the input that shows it. */
function verdict({ source, flags }: Pick<Literal, "source" | "flags">): string {
  const result = checkSync(source, flags);
  if (result.status === "safe") return "safe";
  if (result.status === "vulnerable")
    return `vulnerable (${result.complexity.type}): ${result.attack.pattern}`;
  return `unknown (${result.error.kind})`;
}

describe("the regular expressions in Bulwark's code", () => {
  it("recheck finds a polynomial one (the PEM line trim this test was written for)", () => {
    assert.match(verdict({ source: "[ \\t]+$", flags: "" }), /^vulnerable \(polynomial\)/);
  });

  it("are all safe from catastrophic backtracking", () => {
    const literals = sourceFiles(ROOT).flatMap(regexLiterals);
    assert.ok(literals.length > 100, `only ${literals.length} literals found`);
    const unsafe = literals.flatMap(literal => {
      const found = verdict(literal);
      return found === "safe"
        ? []
        : [`${literal.where} /${literal.source}/${literal.flags} ${found}`];
    });
    assert.deepEqual(unsafe, []);
  });

  it("are literals: none is built at run time from what it would read (RE2 runs those)", () => {
    const built = sourceFiles(ROOT)
      .flatMap(builtRegexes)
      .filter(where => !BUILT_FROM_CONSTANTS.some(file => where.startsWith(`${file}:`)));
    assert.deepEqual(built, []);
  });
});
