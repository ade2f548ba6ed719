import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { waitUntil } from "../../test/harness/wait";
import { TrafficObservers } from "./observer";
import { RECORD } from "./testkit";
import type { RequestRecord } from "./traffic";

const record: RequestRecord = {
  ...RECORD,
  host: "shop.test",
  authority: "shop.test:8080",
  variant: "canary",
  path: "/cart",
  responseBytes: 12,
  durationSeconds: 0.002,
  upstreamSeconds: 0.001,
  decision: "header x-canary=always",
};

describe("TrafficObservers", () => {
  it("given both off, there is nothing to observe", () => {
    assert.equal(TrafficObservers.create({ metrics: false, accessLog: false }), undefined);
  });

  it("given the access log on, writes one JSON line per request in the gateway's log shape", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "access-")), "access.log");
    const observers = TrafficObservers.create({
      metrics: false,
      accessLog: true,
      accessLogPath: path,
    })!;
    observers.observe(record);
    observers.observe({ ...record, status: 503, variant: "main" });
    observers.flush();
    // The file stream opens and writes on the thread pool: wait for both lines, not a fixed time.
    const written = (): string => (existsSync(path) ? readFileSync(path, "utf8") : "");
    await waitUntil("both lines in the file", () => written().split("\n").length > 2);
    const lines = written()
      .trimEnd()
      .split("\n")
      .map(l => JSON.parse(l) as Record<string, unknown>);
    assert.equal(lines.length, 2);
    assert.deepEqual(
      [
        lines[0]?.level,
        lines[0]?.msg,
        lines[0]?.log,
        lines[0]?.host,
        lines[0]?.decision,
        lines[0]?.pid,
      ],
      [30, "request", "access", "shop.test:8080", "header x-canary=always", process.pid],
    );
    assert.equal(lines[1]?.status, 503);
    assert.equal(observers.metrics, undefined);
  });
});
