// trimGoSpace against Go's strings.TrimSpace itself (test/oracles/net), on every short string
// over Go's space characters and their look-alikes, then on long generated ones; and the hostile
// runs that made the regular expressions these functions replaced take seconds.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { askGoOracle } from "../test/harness/go-oracle";
import { pick, seededRandom, shortStrings } from "../test/harness/generate";
import { isSlash, isSpaceOrTab, trimEndWhere, trimGoSpace, trimWhere } from "./trim";

// Every character Go's unicode.IsSpace accepts, and neighbours it does not (zero-width space,
// BOM, the Mongolian vowel separator Unicode 6.3 stopped calling a space, U+001C..U+001F, which
// JS's trim() keeps too, and letters).
const GO_SPACES = [
  "\t",
  "\n",
  "\v",
  "\f",
  "\r",
  " ",
  "\u0085",
  "\u00a0",
  "\u1680",
  "\u2000",
  "\u2005",
  "\u200a",
  "\u2028",
  "\u2029",
  "\u202f",
  "\u205f",
  "\u3000",
];
const NOT_SPACES = ["a", "/", "\u200b", "\ufeff", "\u180e", "\u001c", "\u001f", "\u0084", "\u2030"];

function agreeWithGo(texts: string[]): void {
  const go = askGoOracle(
    "net",
    texts.map(text => ["trimspace", text]),
  );
  texts.forEach((text, i) => {
    assert.equal(trimGoSpace(text), go[i], `TrimSpace(${JSON.stringify(text)})`);
  });
}

describe("trimGoSpace", () => {
  it("trims what Go's strings.TrimSpace trims, on every string of up to 3 characters", () => {
    agreeWithGo([...shortStrings([...GO_SPACES, ...NOT_SPACES], 3)]);
  });

  it("agrees with Go on 5 000 generated strings of up to 40 characters", () => {
    const random = seededRandom(20261207);
    const alphabet = [...GO_SPACES, ...NOT_SPACES];
    const texts = Array.from({ length: 5000 }, () =>
      Array.from({ length: Math.floor(random() * 40) }, () => pick(random, alphabet)).join(""),
    );
    agreeWithGo(texts);
  });

  it("reads a run of 200 000 spaces between two letters (a quadratic regex took minutes)", () => {
    const run = " \t".repeat(100_000);
    assert.equal(trimGoSpace(`x${run}x`), `x${run}x`);
    assert.equal(trimGoSpace(`${run}x${run}`), "x");
  });
});

describe("trimWhere and trimEndWhere", () => {
  it("trim within the range given, and return the text itself when nothing is trimmed", () => {
    assert.equal(trimWhere(" a: b \t", isSpaceOrTab, 3), "b");
    assert.equal(trimWhere(" a: b \t", isSpaceOrTab, 0, 2), "a");
    assert.equal(
      trimEndWhere("https://permissions.example//", isSlash),
      "https://permissions.example",
    );
    assert.equal(trimEndWhere("///", isSlash), "");
    const text = "kept";
    assert.equal(trimWhere(text, isSpaceOrTab), text);
  });
});
