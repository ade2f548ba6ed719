import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { EdgeMetrics } from "../../edge-health-daemon/metrics";
import { registry } from "../pepr/metrics";
import { edgeMetrics } from "./metrics";

interface Dashboard {
  panels: { title: string; targets: { expr: string }[] }[];
}

describe("the edge-health Grafana dashboard", () => {
  const dashboard = JSON.parse(
    readFileSync(join(__dirname, "grafana-dashboard.json"), "utf8"),
  ) as Dashboard;

  it("queries only metrics the module or the daemon exports, by labels they set", async () => {
    assert.ok(edgeMetrics.protectedNodes, "the module's metrics are registered");
    const daemon = new EdgeMetrics();
    const exported = [
      ...(await registry.getMetricsAsJSON()),
      ...(await daemon.registry.getMetricsAsJSON()),
    ];
    const names = new Set(
      exported.flatMap(m => [m.name, `${m.name}_bucket`, `${m.name}_count`, `${m.name}_sum`]),
    );
    const labels = new Set(["rule", "peer", "check", "value", "reason", "le"]);
    for (const panel of dashboard.panels) {
      for (const { expr } of panel.targets) {
        for (const [metric] of expr.matchAll(/bulwark_[a-z_]+/g)) {
          assert.ok(names.has(metric), `${panel.title}: ${metric} is not exported`);
        }
        const grouped = [...expr.matchAll(/by \(([a-z_, ]+)\)/g)].flatMap(m =>
          (m[1] ?? "").split(",").map(l => l.trim()),
        );
        for (const label of grouped) {
          assert.ok(labels.has(label), `${panel.title}: label ${label} is not set`);
        }
      }
    }
  });

  it("shows protection, kept endpoints, probes, votes, rejections and decision latency", () => {
    const titles = dashboard.panels.map(p => p.title).join("\n");
    for (const wanted of [
      "Protected nodes",
      "kept ready",
      "probes",
      "Votes",
      "rejected",
      "latency",
    ]) {
      assert.match(titles, new RegExp(wanted));
    }
  });
});
