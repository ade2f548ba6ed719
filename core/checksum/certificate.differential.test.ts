// firstPemBlock against Go's encoding/pem itself (test/oracles/pem), which Tengine-Ingress finds a
// TLS Secret's leaf certificate with: texts generated from the pieces a PEM parser decides on
// (BEGIN and END lines of matching and other types, headers, bodies good and bad, CRLF, stray
// text, lines that do not start where a line starts), then hostile ones a quadratic parser stalls
// on. Both must find the same first block, or none.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { askGoOracle } from "../../test/harness/go-oracle";
import { pick, seededRandom } from "../../test/harness/generate";
import { firstPemBlock } from "./certificate";

type Random = () => number;

const TYPES = ["CERTIFICATE", "X", "A B", "", "A:B", "CERTIFICATE "];
const BODIES = [
  "aGVsbG8gd29ybGQh", // "hello world!"
  "aGVsbG8g\nd29ybGQh",
  "aGVs bG8g\td29y\r\nbGQh",
  "aGVsbG8",
  "*not base64*",
  "AA==",
  "AA==AA==",
  "",
];
const HEADERS = ["Proc-Type: 4,ENCRYPTED", "DEK-Info: AES-128-CBC,00", "K:V", "not a header"];
const ENDINGS = ["\n", "\r\n", "", " \n", "\t\r\n"];

function begin(random: Random, type: string): string {
  const prefix = random() < 0.1 ? "x" : "";
  return `${prefix}-----BEGIN ${type}-----${pick(random, ENDINGS)}`;
}

function end(random: Random, type: string): string {
  const trailer = random() < 0.1 ? pick(random, [" junk", "--", " "]) : "";
  return `-----END ${type}-----${trailer}${pick(random, ENDINGS)}`;
}

/** A block, mostly well-formed, now and then broken in one of the ways a parser must judge. */
function block(random: Random): string {
  const type = pick(random, TYPES);
  const endType = random() < 0.85 ? type : pick(random, TYPES);
  const headers =
    random() < 0.2
      ? `${Array.from({ length: 1 + Math.floor(random() * 2) }, () => pick(random, HEADERS)).join("\n")}\n${random() < 0.7 ? "\n" : ""}`
      : "";
  const body = pick(random, BODIES);
  const bodyLines = body === "" ? "" : `${body}${pick(random, ["\n", "\r\n", "\n\n"])}`;
  const parts = [begin(random, type), headers, bodyLines, end(random, endType)];
  if (random() < 0.1) parts.splice(3, 1); // no END line
  if (random() < 0.05) parts.splice(0, 1); // no BEGIN line
  return parts.join("");
}

function text(random: Random): string {
  const pieces = Array.from({ length: 1 + Math.floor(random() * 4) }, () =>
    random() < 0.8 ? block(random) : pick(random, ["junk\n", "-----\n", "\n", "a:b\n", ""]),
  );
  return pieces.join(random() < 0.8 ? "" : "\n");
}

function agree(texts: readonly string[]): void {
  const answers = askGoOracle("pem", texts) as ({ type: string; der: string } | null)[];
  for (const [index, input] of texts.entries()) {
    const ours = firstPemBlock(input);
    const go = answers[index];
    const said = ours && { type: ours.type, der: ours.der.toString("base64") };
    assert.deepEqual(said ?? null, go, `input ${JSON.stringify(input.slice(0, 300))}`);
  }
}

describe("firstPemBlock against Go's encoding/pem", () => {
  it("finds the same first block as Go in 20 000 generated texts", () => {
    const random = seededRandom(20261207);
    const texts = Array.from({ length: 20_000 }, () => text(random));
    // Each kind of answer is reached, or the generator tests nothing.
    const found = texts.filter(t => firstPemBlock(t) !== undefined).length;
    assert.ok(found > 2_000 && found < 18_000, `${found} of 20 000 texts hold a block`);
    agree(texts);
  });

  it("agrees on hostile texts, and reads each in time linear in it", () => {
    const good = "-----BEGIN CERTIFICATE-----\naGVsbG8gd29ybGQh\n-----END CERTIFICATE-----\n";
    const hostile = [
      "-----BEGIN CERTIFICATE-----\n".repeat(40_000),
      `${"-----BEGIN CERTIFICATE-----\n".repeat(40_000)}${good}`,
      "\n-----END CERTIFICATE-----".repeat(40_000),
      `${"-----BEGIN A-----\n\n-----END B-----\n".repeat(20_000)}${good}`,
      `${"-----BEGIN X-----\nK: V\n".repeat(20_000)}${good}`,
      // Lines end without their trailing blanks: a run of them before a letter stalled /[ \t]+$/.
      `-----BEGIN CERTIFICATE-----\n${" \t".repeat(100_000)}x\n-----END CERTIFICATE-----\n`,
      `-----BEGIN CERTIFICATE-----${" \t".repeat(100_000)}x\n${good}`,
    ];
    agree(hostile);
  });
});
