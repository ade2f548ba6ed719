import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { CoreV1Event } from "@kubernetes/client-node";
import { eventFor, recordEvent, type EventRecorder } from "./events";

const pod = {
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name: "web-0", namespace: "shop", uid: "u-1" },
};
const reporter = { component: "permission-server", instance: "bulwark-permission-server-0" };

describe("eventFor", () => {
  it("names the object, the reporter and the note, once, at `now`", () => {
    const now = new Date("2026-12-04T18:00:00Z");
    const event = eventFor(
      pod,
      { type: "Normal", reason: "Granted", message: "ok" },
      reporter,
      now,
    );
    assert.deepEqual(event.metadata, { generateName: "web-0.", namespace: "shop" });
    assert.deepEqual(event.involvedObject, {
      apiVersion: "v1",
      kind: "Pod",
      name: "web-0",
      namespace: "shop",
      uid: "u-1",
    });
    assert.equal(event.reason, "Granted");
    assert.equal(event.source?.component, "bulwark-permission-server");
    assert.equal(event.reportingComponent, "bulwark.dev/permission-server");
    assert.equal(event.reportingInstance, "bulwark-permission-server-0");
    assert.equal(event.firstTimestamp, now);
    assert.equal(event.count, 1);
  });
  it("puts a cluster-scoped object's Event in default and cuts the message to 1 KiB", () => {
    const node = { apiVersion: "v1", kind: "Node", metadata: { name: "edge-1" } };
    const event = eventFor(
      node,
      { type: "Warning", reason: "Long", message: "x".repeat(5000) },
      reporter,
      new Date(),
    );
    assert.equal(event.metadata.namespace, "default");
    assert.equal(event.involvedObject.namespace, undefined);
    assert.equal(event.message?.length, 1024);
  });
});

describe("recordEvent", () => {
  it("creates the Event in the object's namespace", async () => {
    const created: [string, CoreV1Event][] = [];
    const recorder: EventRecorder = {
      create: async (namespace, event) => void created.push([namespace, event]),
      warn: () => assert.fail("no warning expected"),
      reporter,
    };
    await recordEvent(recorder, pod, { type: "Normal", reason: "Revoked", message: "done" });
    assert.equal(created.length, 1);
    assert.equal(created[0]?.[0], "shop");
    assert.equal(created[0]?.[1].reason, "Revoked");
  });
  it("given a client that fails, warns with the object and reason and does not throw", async () => {
    const warnings: Record<string, unknown>[] = [];
    const recorder: EventRecorder = {
      create: () => Promise.reject(new Error("events is forbidden")),
      warn: (_message, fields) => void warnings.push(fields),
      reporter,
    };
    await recordEvent(recorder, pod, { type: "Warning", reason: "GrantFailed", message: "x" });
    assert.deepEqual(warnings, [
      { ns: "shop", name: "web-0", reason: "GrantFailed", err: "events is forbidden" },
    ]);
  });
});
