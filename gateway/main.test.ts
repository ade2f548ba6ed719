import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { main } from "./main";

function capture(stream: NodeJS.WriteStream): { text: () => string; restore: () => void } {
  let text = "";
  const write = stream.write.bind(stream);
  stream.write = ((chunk: string | Uint8Array) => (
    (text += String(chunk)),
    true
  )) as typeof stream.write;
  return { text: () => text, restore: () => void (stream.write = write) };
}

describe("bulwark-gateway main", () => {
  it("--version prints the version and returns 0", async () => {
    const out = capture(process.stdout);
    try {
      assert.equal(await main(["--version"]), 0);
    } finally {
      out.restore();
    }
    assert.match(out.text(), /^\d+\.\d+\.\d+\n$/);
  });

  it("--help lists the settings and returns 0", async () => {
    const out = capture(process.stdout);
    try {
      assert.equal(await main(["--help"]), 0);
    } finally {
      out.restore();
    }
    assert.match(out.text(), /BULWARK_POD_NAME/);
    assert.match(out.text(), /BULWARK_INGRESS_CHECKSUM/);
  });

  it("a missing setting prints one line naming it and returns 2", async () => {
    const saved = process.env.BULWARK_POD_NAME;
    delete process.env.BULWARK_POD_NAME;
    const err = capture(process.stderr);
    try {
      assert.equal(await main([]), 2);
    } finally {
      err.restore();
      if (saved !== undefined) process.env.BULWARK_POD_NAME = saved;
    }
    assert.equal(
      err.text(),
      "bulwark-gateway: BULWARK_POD_NAME is required (the pod name, from the Downward API)\n",
    );
  });
});
