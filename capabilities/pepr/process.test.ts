import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { isWatcherProcess } from "./process";

describe("isWatcherProcess", () => {
  const cases: [NodeJS.ProcessEnv, boolean][] = [
    [{ PEPR_WATCH_MODE: "true" }, true],
    [{ PEPR_MODE: "dev" }, true],
    [{ PEPR_MODE: "build" }, false],
    [{}, false],
  ];
  for (const [env, expected] of cases) {
    it(`given ${JSON.stringify(env)}, returns ${expected}`, () =>
      assert.equal(isWatcherProcess(env), expected));
  }
});
