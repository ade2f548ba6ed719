// docs/install.md stays true without a cluster to run it on: every shell block parses (`bash -n`);
// blocks that need a container engine say so (`sh container`), so nobody runs them by accident;
// and every `bulwark` command the page names, in a block or in inline code, exists with every
// flag it is given there (the command's own --help lists them).
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, it } from "node:test";
import { main } from "../cli/main";

const ROOT = resolve(__dirname, "..");
const PAGE = readFileSync(join(ROOT, "docs", "install.md"), "utf8");
const CONTAINER_ENGINE = /(^|[\s;&|(])(docker|podman|buildah|nerdctl) /m;

/** The page's fenced shell blocks: their info string and their text. */
export function shellBlocks(markdown: string): { info: string; text: string }[] {
  return [...markdown.matchAll(/^```(sh[^\n]*)\n([\s\S]*?)^```$/gm)].map(m => ({
    info: (m[1] ?? "").trim(),
    text: m[2] ?? "",
  }));
}

/** Each `bulwark …` command line in code (blocks, and inline code spans outside blocks). */
export function bulwarkCommands(markdown: string): string[] {
  const blocks = shellBlocks(markdown).map(b => b.text);
  const withoutBlocks = markdown.replace(/^```[\s\S]*?^```$/gm, "");
  const spans = [...withoutBlocks.matchAll(/`([^`\n]+)`/g)].map(m => m[1] ?? "");
  const code = [...blocks.flatMap(b => b.replace(/\\\n/g, " ").split("\n")), ...spans];
  return code.flatMap(line =>
    [...line.matchAll(/(?:^|[;&|]\s*)(?:\.\/bin\/bulwark\.js|bulwark)((?:[ \t]+[^\s#;&|]+)+)/g)]
      .map(m => (m[1] ?? "").trim().replace(/\s+/g, " "))
      .filter(command => /^[a-z]/.test(command)),
  );
}

/** The command words (`install secrets`) and the flags (`-n`, `--release`) of a command line. */
export function commandParts(command: string): { words: string[]; flags: string[] } {
  const tokens = command.split(/\s+/);
  const words: string[] = [];
  for (const token of tokens) {
    if (!/^[a-z][a-z-]*$/.test(token) || words.length === 2) break;
    words.push(token);
  }
  const flags = tokens.filter(t => /^--?[a-z]/.test(t)).map(t => t.split("=")[0] ?? t);
  return { words, flags };
}

/**
 * The image's programs (bin/bulwark.js runs them, not the CLI): `bulwark gateway`, ...; each
 * answers --help and --version (test/integration/packaging/entrypoints.test.ts).
 */
const PROGRAMS = new Set(["gateway", "permission-server", "init", "edge-health"]);
const PROGRAM_FLAGS = new Set(["--help", "--version"]);

async function helpOf(words: string[]): Promise<string> {
  let out = "";
  const code = await main(
    [...words, "--help"],
    s => (out += s),
    () => {},
  );
  assert.equal(code, 0);
  return out;
}

describe("docs/install.md", () => {
  const blocks = shellBlocks(PAGE);

  it("has shell blocks, and each parses", () => {
    assert.ok(blocks.length >= 5, `${blocks.length} blocks`);
    for (const block of blocks) {
      const parsed = spawnSync("bash", ["-n"], { input: block.text, encoding: "utf8" });
      assert.equal(parsed.status, 0, `${block.text}\n${parsed.stderr}`);
    }
  });

  it("marks exactly the blocks that need a container engine `sh container`", () => {
    for (const block of blocks) {
      const needs = CONTAINER_ENGINE.test(block.text);
      assert.equal(block.info === "sh container", needs, `${block.info}:\n${block.text}`);
    }
  });

  it("names only bulwark commands and flags that exist", async () => {
    const commands = bulwarkCommands(PAGE);
    assert.ok(
      commands.some(c => c.startsWith("install secrets")),
      commands.join("\n"),
    );
    for (const command of commands) {
      const { words, flags } = commandParts(command);
      if (PROGRAMS.has(words[0] ?? "")) {
        assert.match(await helpOf([]), new RegExp(`bulwark gateway\\|permission-server\\|init`));
        const unknown = flags.filter(flag => !PROGRAM_FLAGS.has(flag));
        assert.deepEqual(unknown, [], `bulwark ${command}`);
        continue;
      }
      const help = await helpOf(words);
      assert.ok(
        help.startsWith("Usage:") && help.includes(`bulwark ${words.join(" ")}`),
        `bulwark ${command}: no such command (its --help is the general one)`,
      );
      for (const flag of flags.filter(f => f !== "--help")) {
        assert.match(
          help,
          new RegExp(`(^|[\\s[])${flag}([\\s=\\]]|$)`, "m"),
          `bulwark ${command}: ${flag}`,
        );
      }
    }
  });

  it("finds commands as a reader would, and tells a wrong one", () => {
    const page = [
      "Run `bulwark install secrets --renew` or `bulwark` alone.",
      "```sh",
      "./bin/bulwark.js permission tls --server-namespace ns \\",
      "  --days 10 && bulwark uninstall --dry-run",
      "```",
    ].join("\n");
    assert.deepEqual(bulwarkCommands(page), [
      "permission tls --server-namespace ns --days 10",
      "uninstall --dry-run",
      "install secrets --renew",
    ]);
    assert.deepEqual(commandParts("install secrets -n NS --release=edge"), {
      words: ["install", "secrets"],
      flags: ["-n", "--release"],
    });
  });
});
