// Go programs as oracles: ingress-nginx reads annotations with Go's standard library, so a
// differential test asks the real thing. Each program in test/oracles/<name>/main.go reads one
// JSON value per line and answers one per line; it is built once per content into the user's cache.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

function oracleBinary(name: string): string {
  const source = join(__dirname, "..", "oracles", name, "main.go");
  const digest = createHash("sha256").update(readFileSync(source)).digest("hex").slice(0, 12);
  const dir = join(homedir(), ".cache", "bulwark", "oracles");
  const binary = join(dir, `${name}-${digest}`);
  if (!existsSync(binary)) {
    mkdirSync(dir, { recursive: true });
    execFileSync("go", ["build", "-o", binary, source], { stdio: "inherit" });
  }
  return binary;
}

/** What the oracle `name` answers for each query, in order (parsed JSON). */
export function askGoOracle(name: string, queries: readonly unknown[]): unknown[] {
  const stdin = queries.map(query => JSON.stringify(query)).join("\n") + "\n";
  const stdout = execFileSync(oracleBinary(name), { input: stdin, maxBuffer: 256 << 20 });
  const lines = stdout.toString("utf8").trimEnd().split("\n");
  if (lines.length !== queries.length) {
    throw new Error(
      `the ${name} oracle answered ${lines.length} lines for ${queries.length} queries`,
    );
  }
  return lines.map(line => JSON.parse(line) as unknown);
}
