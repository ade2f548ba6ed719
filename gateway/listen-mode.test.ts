import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { effectiveListenMode, supportsReusePort } from "./listen-mode";

describe("listen mode", () => {
  it("knows which Node releases take reusePort", () => {
    for (const version of ["v22.12.0", "v22.20.1", "v23.1.0", "v24.22.3", "v25.0.0"])
      assert.equal(supportsReusePort(version), true, version);
    for (const version of ["v20.20.2", "v21.7.3", "v22.11.0", "v23.0.0", "nonsense"])
      assert.equal(supportsReusePort(version), false, version);
  });

  it("uses reuse-port only where the runtime and the kernel have it, round robin otherwise", () => {
    assert.equal(effectiveListenMode("reuse-port", "v24.22.3", "linux"), "reuse-port");
    assert.equal(effectiveListenMode("reuse-port", "v20.20.2", "linux"), "round-robin");
    assert.equal(effectiveListenMode("reuse-port", "v24.22.3", "darwin"), "round-robin");
    assert.equal(effectiveListenMode("round-robin", "v24.22.3", "linux"), "round-robin");
  });
});
