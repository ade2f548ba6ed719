// What a tenant's hostile text costs Bulwark's readers of it, against the regular expressions they
// replaced (the peers: V8's backtracking engine, quadratic on these inputs):
//   - a TLS Secret of BEGIN lines without an END, read for its certificate blocks
//     (core/tls/certificate.ts certificateBlocks; peer /BEGIN[\s\S]+?END/g);
//   - the same Secret for the checksum's first block (core/checksum/certificate.ts firstPemBlock,
//     Go's pem.Decode; no peer kept: the old reader was 80 lines, not one expression);
//   - a PEM line of blanks before a letter, its trailing blanks trimmed (trimEndWhere; peer
//     /[ \t]+$/);
//   - an allowlist-source-range entry of blanks between letters (parseRanges; peer Go's
//     TrimSpace as /^[spaces]+|[spaces]+$/g, then the same parse).
//
//   npx tsx hack/bench/hostile-text.ts [--sizes 10000,20000,40000] [--rounds 3]
//
// About 1 min at the defaults, nearly all of it the peers. Prints the best of the rounds (ms).
import { parseArgs } from "node:util";
import { certificateBlocks } from "../../core/tls/certificate";
import { firstPemBlock } from "../../core/checksum/certificate";
import { parseRanges } from "../../core/net/ranges";
import { isSpaceOrTab, trimEndWhere } from "../../core/trim";
import { bestOf } from "./stats";

const { values } = parseArgs({
  options: { sizes: { type: "string" }, rounds: { type: "string" } },
});
const SIZES = (values.sizes ?? "10000,20000,40000").split(",").map(Number);
const ROUNDS = Number(values.rounds ?? 3);

const LAZY_BLOCKS = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;
const TRAILING_BLANKS = /[ \t]+$/;
const GO_SPACE =
  /^[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+|[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+$/g;

interface Case {
  name: string;
  /** The hostile text of `size` units (lines or characters). */
  text(size: number): string;
  ours(text: string): unknown;
  peer?(text: string): unknown;
}

const CASES: Case[] = [
  {
    name: "certificate blocks, BEGIN lines",
    text: size => "-----BEGIN CERTIFICATE-----\n".repeat(size),
    ours: certificateBlocks,
    peer: text => text.match(LAZY_BLOCKS),
  },
  {
    name: "checksum's first block, BEGIN lines",
    text: size => "-----BEGIN CERTIFICATE-----\n".repeat(size),
    ours: firstPemBlock,
  },
  {
    name: "PEM line trim, blanks before a letter",
    text: size => `${" \t".repeat(size / 2)}x\u0000`,
    ours: text => trimEndWhere(text, isSpaceOrTab),
    peer: text => text.replace(TRAILING_BLANKS, ""),
  },
  {
    name: "source-range entry, blanks between letters",
    text: size => `x${" \t".repeat(size / 2)}x`,
    ours: parseRanges,
    peer: text => parseRanges(text.replace(GO_SPACE, "")),
  },
];

function main(): void {
  console.log(`Hostile text, best of ${ROUNDS} (ms), Node ${process.version}`);
  console.log("| input | size | KiB | Bulwark ms | peer ms | peer / Bulwark |");
  console.log("| ----- | ---- | --- | ---------- | ------- | -------------- |");
  for (const { name, text, ours, peer } of CASES) {
    for (const size of SIZES) {
      const input = text(size);
      const mine = bestOf(ROUNDS, () => ours(input));
      const theirs = peer === undefined ? undefined : bestOf(ROUNDS, () => peer(input));
      const ratio = theirs === undefined ? "—" : (theirs / mine).toFixed(0);
      const kib = (input.length / 1024).toFixed(0);
      const peerText = theirs === undefined ? "—" : theirs.toFixed(1);
      console.log(`| ${name} | ${size} | ${kib} | ${mine.toFixed(3)} | ${peerText} | ${ratio} |`);
    }
  }
}

main();
