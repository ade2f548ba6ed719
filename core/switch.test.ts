import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { parseSwitch } from "./switch";

describe("parseSwitch", () => {
  it("reads true/on and false/off in any case, trimmed", () => {
    for (const text of ["true", " ON ", "True"]) assert.equal(parseSwitch(text), true, text);
    for (const text of ["false", "Off", "FALSE "]) assert.equal(parseSwitch(text), false, text);
  });

  it("reads nothing else, property names of plain objects included", () => {
    for (const text of ["", "yes", "1", "constructor", "__proto__", "toString"])
      assert.equal(parseSwitch(text), undefined, text);
  });
});
