// parseGoBool and parseGoInt against Go's strconv itself, over every short string of the
// characters that matter (signs, digits, the letters of true/false, spaces, separators, a
// non-ASCII digit) plus int64's edges and random longer strings: they must agree on every one.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { askGo } from "../test/harness/go-strconv";
import { seededRandom as seeded, shortStrings } from "../test/harness/generate";
import { parseGoBool, parseGoInt } from "./go-strconv";

const ALPHABET = [
  "0",
  "1",
  "7",
  "9",
  "+",
  "-",
  "t",
  "T",
  "r",
  "R",
  "u",
  "e",
  "E",
  "f",
  "F",
  "a",
].concat(["l", "s", "S", " ", "_", "x", ".", "\t", "٣"]);

function inputs(): string[] {
  const all = [...shortStrings(ALPHABET, 3)];
  for (const word of ["true", "false", "TRUE", "FALSE", "True", "False", "tRue", "falsE"]) {
    all.push(word, ` ${word}`, `${word} `, `${word}\n`, `+${word}`);
  }
  const edges = ["9223372036854775807", "9223372036854775808", "-9223372036854775808"];
  for (const edge of [...edges, "-9223372036854775809", "18446744073709551616"]) {
    all.push(edge, `+${edge.replace(/^-/, "")}`, `0000${edge}`);
  }
  const random = seeded(16);
  for (let i = 0; i < 4000; i++) {
    const length = 4 + Math.floor(random() * 20);
    let text = "";
    for (let j = 0; j < length; j++) text += ALPHABET[Math.floor(random() * ALPHABET.length)];
    all.push(text);
  }
  // Numbers of every length up to past int64's 19 digits, with and without a sign.
  for (let i = 0; i < 2000; i++) {
    const length = 1 + Math.floor(random() * 22);
    let digits = "";
    for (let j = 0; j < length; j++) digits += String(Math.floor(random() * 10));
    all.push(["", "+", "-"][i % 3] + digits);
  }
  return all;
}

describe("Go's strconv, differentially", () => {
  const cases = inputs();
  const answers = askGo(cases);

  it(`parseGoBool agrees with strconv.ParseBool on all ${cases.length} inputs`, () => {
    const differ = cases.filter((text, i) => parseGoBool(text) !== answers[i]?.bool);
    assert.deepEqual(differ, []);
    assert.equal(new Set(cases.filter((_, i) => answers[i]?.bool !== undefined)).size, 12);
  });

  it(`parseGoInt agrees with strconv.Atoi on all ${cases.length} inputs`, () => {
    const differ = cases.filter((text, i) => parseGoInt(text) !== answers[i]?.int);
    assert.deepEqual(differ, []);
    assert.ok(new Set(cases.filter((_, i) => answers[i]?.int !== undefined)).size > 1500);
  });
});
