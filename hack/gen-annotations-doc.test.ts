import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { ANNOTATIONS_DOC, renderAnnotationsDoc } from "./gen-annotations-doc";

describe("docs/annotations.md", () => {
  it("matches the annotation catalog (run `npm run gen:docs`)", () => {
    assert.equal(readFileSync(ANNOTATIONS_DOC, "utf8"), renderAnnotationsDoc());
  });
});
