// The hand-written docs stay true: their links resolve inside the repository, and the metric
// names and environment variables docs/troubleshooting.md tells users to look for exist.
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, it } from "node:test";
import { sections } from "./gen-metrics-doc";

const ROOT = resolve(__dirname, "..");
const TROUBLESHOOTING = join(ROOT, "docs", "troubleshooting.md");
/** Words of Kubernetes (and cert-manager) the page quotes, not Bulwark's. */
const KUBERNETES_WORDS = new Set([
  "True",
  "False",
  "Init",
  "Terminating",
  "ContainerCreating",
  "FailedMount",
  "FailedCreate",
  "Certificate",
]);

const markdown = (): string[] => [
  join(ROOT, "README.md"),
  ...readdirSync(join(ROOT, "docs"))
    .filter(name => name.endsWith(".md"))
    .map(name => join(ROOT, "docs", name)),
  join(ROOT, "permission-server", "README.md"),
  join(ROOT, "edge-health-daemon", "README.md"),
];

/** The TypeScript sources Bulwark ships and builds with (tests and node_modules left out). */
function sources(dir = ROOT): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap(entry => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      return ["node_modules", "build", "dist", ".git"].includes(entry.name) ? [] : sources(path);
    }
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".test.ts") ? [path] : [];
  });
}

describe("the docs", () => {
  it("link only to files inside the repository that exist", () => {
    for (const file of markdown()) {
      const text = readFileSync(file, "utf8");
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (!target || /^(https?:|mailto:|#)/.test(target)) continue;
        const path = resolve(dirname(file), target.split("#")[0] ?? "");
        const where = `${relative(ROOT, file)}: ${target}`;
        assert.ok(!relative(ROOT, path).startsWith(".."), `${where} leaves the repository`);
        assert.ok(existsSync(path), `${where} does not exist`);
      }
    }
  });

  it("link the troubleshooting page from the README", () => {
    assert.match(readFileSync(join(ROOT, "README.md"), "utf8"), /\(docs\/troubleshooting\.md\)/);
  });

  it("troubleshooting names only registered metrics and variables the code reads", () => {
    const text = readFileSync(TROUBLESHOOTING, "utf8");
    const registered = new Set(sections().flatMap(section => section.rows.map(row => row.name)));
    const histograms = [...registered].flatMap(n => [`${n}_bucket`, `${n}_count`, `${n}_sum`]);
    for (const [metric] of text.matchAll(/\bbulwark_[a-z_]+\b/g)) {
      assert.ok(
        registered.has(metric) || histograms.includes(metric),
        `${metric} is not a registered metric`,
      );
    }
    const code = sources()
      .map(path => readFileSync(path, "utf8"))
      .join("\n");
    for (const [variable] of text.matchAll(/\bBULWARK_[A-Z_]+\b/g)) {
      assert.ok(code.includes(variable), `${variable} is read nowhere in the code`);
    }
    // Event reasons, condition types and reasons, kinds: each a string the code writes.
    for (const [, word] of text.matchAll(/`([A-Z][A-Za-z]+)`/g)) {
      if (!word || KUBERNETES_WORDS.has(word)) continue;
      assert.ok(code.includes(`"${word}"`), `${word} is written nowhere in the code`);
    }
  });
});
