import { describe, it } from "node:test";
import assert from "node:assert/strict";
import * as checksum from "./index";

describe("core/checksum public surface", () => {
  it("given the folder's index, returns the annotation names the checksum depends on", () => {
    assert.equal(checksum.VERSION_ANNOTATION, "nginx.ingress.kubernetes.io/version");
    assert.equal(checksum.BULWARK_ANNOTATION_PREFIX, "bulwark.dev/");
  });
});
