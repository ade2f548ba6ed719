import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { markerPath, parseDemoRequest, type ZoneInfo } from "./demo-control";

describe("demo commands", () => {
  const zone: ZoneInfo = {
    zone: "demo",
    nodes: [{ name: "bulwark-edge-1", address: "127.0.0.2", daemon: "http://127.0.0.2:51105" }],
  };

  it("accepts an action and a node of the zone", () => {
    assert.deepEqual(parseDemoRequest(["cut", "bulwark-edge-1"], zone), {
      ok: true,
      action: "cut",
      node: "bulwark-edge-1",
    });
    assert.equal(markerPath("/r", "kill", "n"), "/r/demo/kill/n");
  });

  it("says what to type instead", () => {
    const message = (argv: string[], running = true) => {
      const parsed = parseDemoRequest(argv, running ? zone : undefined);
      return parsed.ok ? "" : parsed.message;
    };
    assert.match(message(["cut"]), /NODE is one of bulwark-edge-1/);
    assert.match(message(["cut", "bulwark-local"]), /not a node of the local edge zone/);
    assert.match(message(["melt", "bulwark-edge-1"]), /unknown action "melt"/);
    assert.match(message(["cut", "bulwark-edge-1"], false), /start it with `npm start`/);
  });
});
