import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  CoalescingWriter,
  readLastGood,
  STATE_FILE,
  writeLastGood,
  type SavedView,
} from "./last-good";
import { waitUntil } from "../../test/harness/wait";

function saved(version: number): Omit<SavedView, "format"> {
  return {
    version,
    goodAt: "2026-01-01T00:00:00.000Z",
    podName: "bulwark-gateway-0",
    state: { view: { ingresses: [], tlsPairs: [], endpointSlices: [] }, secretVersions: {} },
  };
}

describe("last good view on disk", () => {
  it("reads back what was written, and nothing when there is no file", async () => {
    const dir = mkdtempSync(join(tmpdir(), "gw-state-"));
    try {
      assert.equal(await readLastGood(dir), undefined);
      await writeLastGood(join(dir, "sub"), saved(7));
      assert.equal((await readLastGood(join(dir, "sub")))?.version, 7);
      assert.deepEqual(readdirSync(join(dir, "sub")), [STATE_FILE], "no temporary file is left");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("refuses a damaged file, naming it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "gw-state-"));
    try {
      writeFileSync(join(dir, STATE_FILE), JSON.stringify({ format: 1, version: "x" }));
      await assert.rejects(readLastGood(dir), /last-good-view\.json: not a saved gateway view/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a burst of saves writes the first at once and then only the newest", async () => {
    const dir = mkdtempSync(join(tmpdir(), "gw-state-"));
    try {
      const writer = new CoalescingWriter(dir, error => assert.fail(String(error)), 60_000);
      writer.save(saved(1));
      // At once, not after the interval; but the write fsyncs, which a busy disk can make slow.
      const first = await waitUntil("the first save on disk", () => readLastGood(dir), 10_000);
      assert.equal(first.version, 1);
      for (let v = 2; v <= 20; v++) writer.save(saved(v));
      assert.equal((await readLastGood(dir))?.version, 1, "the next write waits for the interval");
      await writer.flush();
      assert.equal((await readLastGood(dir))?.version, 20, "flush writes the newest at once");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
