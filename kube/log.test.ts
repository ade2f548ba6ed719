import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { hostname } from "node:os";
import { errorText } from "./log";

/** Runs `code` in a fresh Node process (the logger writes to the real stdout) and returns its lines. */
function linesOf(code: string): Record<string, unknown>[] {
  const out = execFileSync(process.execPath, ["--import", "tsx", "-e", code], {
    cwd: __dirname,
    encoding: "utf8",
  });
  return out
    .trim()
    .split("\n")
    .filter(Boolean)
    .map(line => JSON.parse(line) as Record<string, unknown>);
}

describe("createLogger", () => {
  it("writes one JSON line per event in pino's shape (as Pepr's module logs), then the component and fields", () => {
    const [line] = linesOf(
      `const { createLogger } = require("./log.ts");
       const log = createLogger("bulwark-test", "info", { self: "node-a" });
       log.info("granted", { ns: "shop", name: "web-0", msg: "forged", level: "forged" });`,
    );
    assert.deepEqual(Object.keys(line ?? {}).slice(0, 5), [
      "level",
      "time",
      "pid",
      "hostname",
      "msg",
    ]);
    assert.equal(line?.msg, "granted");
    assert.equal(line?.level, 30);
    assert.equal(typeof line?.pid, "number");
    assert.equal(line?.hostname, hostname());
    assert.equal(line?.component, "bulwark-test");
    assert.equal(line?.self, "node-a");
    assert.equal(line?.ns, "shop");
    assert.equal(line?.name, "web-0");
    assert.ok(Math.abs(Number(line?.time) - Date.now()) < 60_000, "time is Unix milliseconds");
  });
  it("drops events below its level", () => {
    const lines = linesOf(
      `const { createLogger } = require("./log.ts");
       const log = createLogger("bulwark-test", "warn");
       log.info("hidden"); log.debug("hidden"); log.warn("shown"); log.error("shown too");`,
    );
    assert.deepEqual(
      lines.map(line => [line.level, line.msg]),
      [
        [40, "shown"],
        [50, "shown too"],
      ],
    );
  });
});

describe("errorText", () => {
  it("given an Error, returns its message; given anything else, its text", () => {
    assert.equal(errorText(new Error("connect ECONNREFUSED")), "connect ECONNREFUSED");
    assert.equal(errorText("plain"), "plain");
    assert.equal(errorText(42), "42");
  });
});
