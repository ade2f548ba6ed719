// Go's strconv as an oracle: ingress-nginx reads booleans with strconv.ParseBool and integers
// with strconv.Atoi, so a differential test asks the real thing. The program
// (test/oracles/strconv/main.go) is built once per content into the user's cache.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

const SOURCE = join(__dirname, "..", "oracles", "strconv", "main.go");

export interface GoAnswer {
  /** strconv.ParseBool's value; undefined when it returns an error. */
  bool: boolean | undefined;
  /** strconv.Atoi's value as decimal text (it may not fit a JavaScript number). */
  int: string | undefined;
}

function oracleBinary(): string {
  const source = readFileSync(SOURCE);
  const digest = createHash("sha256").update(source).digest("hex").slice(0, 12);
  const dir = join(homedir(), ".cache", "bulwark", "oracles");
  const binary = join(dir, `strconv-${digest}`);
  if (!existsSync(binary)) {
    mkdirSync(dir, { recursive: true });
    execFileSync("go", ["build", "-o", binary, SOURCE], { stdio: "inherit" });
  }
  return binary;
}

/** What Go answers for each input, in order. */
export function askGo(inputs: readonly string[]): GoAnswer[] {
  const stdin = inputs.map(input => JSON.stringify(input)).join("\n") + "\n";
  const stdout = execFileSync(oracleBinary(), { input: stdin, maxBuffer: 64 << 20 });
  const lines = stdout.toString("utf8").trimEnd().split("\n");
  if (lines.length !== inputs.length) {
    throw new Error(
      `the strconv oracle answered ${lines.length} lines for ${inputs.length} inputs`,
    );
  }
  return lines.map(line => {
    const answer = JSON.parse(line) as { bool: boolean | null; int: string | null };
    return { bool: answer.bool ?? undefined, int: answer.int ?? undefined };
  });
}
