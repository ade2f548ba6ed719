import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:net";
import { candidateRanges, freePort, parsePortRange } from "./ports";

describe("freePort", () => {
  it("hands out distinct ports outside the kernel's ephemeral range, each one bindable", async () => {
    const ephemeral = parsePortRange("32768\t60999");
    const ports: number[] = [];
    for (let i = 0; i < 50; i++) ports.push(await freePort());
    assert.equal(new Set(ports).size, ports.length);
    for (const port of ports) {
      assert.ok(port >= 10_000 && port <= 65_535, `${port}`);
      assert.ok(port < ephemeral.low || port > ephemeral.high, `${port} is ephemeral`);
    }
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(ports[0], "127.0.0.1", resolve);
    });
    await new Promise(resolve => server.close(resolve));
  });

  it("reads the range file, and falls back to Linux's default on anything else", () => {
    assert.deepEqual(parsePortRange("1024 4999\n"), { low: 1024, high: 4999 });
    for (const bad of [undefined, "", "x y", "5000 1024", "0 10", "32768"]) {
      assert.deepEqual(parsePortRange(bad), { low: 32_768, high: 60_999 }, String(bad));
    }
  });

  it("picks from both sides of the ephemeral range, never below 10000", () => {
    assert.deepEqual(candidateRanges({ low: 32_768, high: 60_999 }), [
      { low: 10_000, high: 32_767 },
      { low: 61_000, high: 65_535 },
    ]);
    assert.deepEqual(candidateRanges({ low: 1024, high: 65_535 }), []);
    assert.deepEqual(candidateRanges({ low: 1024, high: 40_000 }), [{ low: 40_001, high: 65_535 }]);
  });
});
