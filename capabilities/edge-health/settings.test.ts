import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { loadEdgeSettings } from "./settings";

describe("loadEdgeSettings", () => {
  it("given nothing set, returns SuperEdge's namespace and the documented defaults", () => {
    assert.deepEqual(loadEdgeSettings({}), {
      zoneConfigNamespace: "kube-system",
      defaultMaxUnknownMs: 86_400_000,
      resyncMs: 10_000,
      voteRules: { maxTermMs: 600_000, maxClockSkewMs: 60_000 },
      votes: "bulwark",
      superEdgePods: { namespace: "kube-system", labels: { name: "edge-health" } },
    });
  });

  it("given every variable, returns them in milliseconds", () => {
    const settings = loadEdgeSettings({
      BULWARK_EDGE_ZONE_NAMESPACE: "edge-system",
      BULWARK_EDGE_MAX_UNKNOWN_SECONDS: "0",
      BULWARK_EDGE_RESYNC_SECONDS: "30",
      BULWARK_EDGE_MAX_VOTE_TERM_SECONDS: "120",
      BULWARK_EDGE_MAX_CLOCK_SKEW_SECONDS: "5",
      BULWARK_EDGE_VOTES: "superedge",
      BULWARK_EDGE_SUPEREDGE_NAMESPACE: "edge-system",
      BULWARK_EDGE_SUPEREDGE_POD_LABEL: "app.kubernetes.io/name=edge-health",
    });
    assert.deepEqual(settings, {
      zoneConfigNamespace: "edge-system",
      defaultMaxUnknownMs: 0,
      resyncMs: 30_000,
      voteRules: { maxTermMs: 120_000, maxClockSkewMs: 5_000 },
      votes: "superedge",
      superEdgePods: {
        namespace: "edge-system",
        labels: { "app.kubernetes.io/name": "edge-health" },
      },
    });
  });

  const bad: [string, string, RegExp][] = [
    [
      "BULWARK_EDGE_RESYNC_SECONDS",
      "10s",
      /BULWARK_EDGE_RESYNC_SECONDS must be an integer from 1 to 3600; got "10s"/,
    ],
    ["BULWARK_EDGE_RESYNC_SECONDS", "0", /BULWARK_EDGE_RESYNC_SECONDS must be an integer/],
    ["BULWARK_EDGE_RESYNC_SECONDS", "", /BULWARK_EDGE_RESYNC_SECONDS must be an integer/],
    [
      "BULWARK_EDGE_MAX_UNKNOWN_SECONDS",
      "1d",
      /BULWARK_EDGE_MAX_UNKNOWN_SECONDS must be an integer/,
    ],
    [
      "BULWARK_EDGE_MAX_UNKNOWN_SECONDS",
      "-1",
      /BULWARK_EDGE_MAX_UNKNOWN_SECONDS must be an integer/,
    ],
    [
      "BULWARK_EDGE_MAX_VOTE_TERM_SECONDS",
      "1e9",
      /BULWARK_EDGE_MAX_VOTE_TERM_SECONDS must be an integer/,
    ],
    [
      "BULWARK_EDGE_ZONE_NAMESPACE",
      "Edge_System",
      /BULWARK_EDGE_ZONE_NAMESPACE must be a namespace name/,
    ],
  ];
  for (const [name, value, message] of bad) {
    it(`given ${name}=${JSON.stringify(value)}, throws naming the variable`, () => {
      assert.throws(() => loadEdgeSettings({ [name]: value }), message);
    });
  }
});
