import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeStopEverything, startProcess, stopEverything } from "./processes";

function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("stopEverything", () => {
  it("tells supervisors before it stops anything, once, and then stops what runs", async () => {
    const dir = mkdtempSync(join(tmpdir(), "bulwark-processes-"));
    try {
      const sleeper = startProcess("sleeper", "sleep", ["60"], { logFile: join(dir, "log") });
      const told: boolean[] = [];
      beforeStopEverything(() => told.push(running(sleeper.pid)));
      const forget = beforeStopEverything(() => told.push(false));
      forget();
      await stopEverything(1000);
      assert.deepEqual(told, [true], "told while the process still ran; a forgotten hook never");
      assert.equal(running(sleeper.pid), false);
      await stopEverything(1000);
      assert.deepEqual(told, [true], "a hook is told once");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
