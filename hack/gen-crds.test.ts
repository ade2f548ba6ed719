import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { CRD_FILES, renderCrd } from "./gen-crds";

describe("crds/", () => {
  for (const [file, make] of Object.entries(CRD_FILES)) {
    it(`given the definition of ${file}, matches the committed file (run \`npm run gen:crds\`)`, () => {
      assert.equal(readFileSync(join(__dirname, "..", "crds", file), "utf8"), renderCrd(make));
    });
  }
});
