import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { main } from "./main";

describe("main", () => {
  it("--help and --version print and return 0", async () => {
    assert.equal(await main(["--help"]), 0);
    assert.equal(await main(["--version"]), 0);
  });

  it("a missing or invalid setting returns 2", async () => {
    const saved = process.env.BULWARK_NODE_NAME;
    delete process.env.BULWARK_NODE_NAME;
    try {
      assert.equal(await main([]), 2);
      assert.equal(await main(["--node-name=edge-1", "--check-period=0"]), 2);
      assert.equal(await main(["--node-name=edge-1", "--bogus"]), 2);
    } finally {
      if (saved !== undefined) process.env.BULWARK_NODE_NAME = saved;
    }
  });

  it("a start-up failure (no kubeconfig) returns 1", async () => {
    assert.equal(await main(["--node-name=edge-1", "--kubeconfig=/nonexistent/kubeconfig"]), 1);
  });
});
