import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { Metrics } from "./metrics";

interface Dashboard {
  panels: { title: string; targets: { expr: string; legendFormat?: string }[] }[];
}

describe("the permissions Grafana dashboard", () => {
  const dashboard = JSON.parse(
    readFileSync(join(__dirname, "grafana-dashboard.json"), "utf8"),
  ) as Dashboard;

  it("queries only metrics the permission server exports, by labels they set", () => {
    const exported = new Map<string, Set<string>>();
    for (const metric of new Metrics().registry.getMetricsAsArray()) {
      const { name, labelNames } = metric as unknown as { name: string; labelNames?: string[] };
      const labels = labelNames ?? [];
      exported.set(name, new Set(labels));
      if ((metric as unknown as { type?: string }).type === "histogram") {
        exported.set(`${name}_bucket`, new Set([...labels, "le"]));
        exported.set(`${name}_count`, new Set(labels));
        exported.set(`${name}_sum`, new Set(labels));
      }
    }
    for (const panel of dashboard.panels) {
      for (const { expr, legendFormat } of panel.targets) {
        const metrics = [...expr.matchAll(/bulwark_[a-z_]+/g)].map(([metric]) => metric);
        assert.ok(metrics.length > 0, `${panel.title}: queries a Bulwark metric`);
        const labels = new Set(
          metrics.flatMap(metric => {
            const set = exported.get(metric);
            assert.ok(set, `${panel.title}: ${metric} is not exported`);
            return [...set];
          }),
        );
        const used = [
          ...[...expr.matchAll(/by \(([a-z_, ]+)\)/g)].flatMap(m =>
            (m[1] ?? "").split(",").map(l => l.trim()),
          ),
          ...[...expr.matchAll(/[{,]\s*([a-z_]+)\s*(?:=~|!=|=)/g)].map(m => m[1] ?? ""),
          ...[...(legendFormat ?? "").matchAll(/\{\{\s*([a-z_]+)\s*\}\}/g)].map(m => m[1] ?? ""),
        ];
        for (const label of used) {
          assert.ok(labels.has(label), `${panel.title}: label ${label} is not set on ${metrics}`);
        }
      }
    }
  });

  it("shows attempts, jobs, time to granted, revocations, breakers and HTTP requests", () => {
    const titles = dashboard.panels.map(p => p.title).join("\n");
    for (const wanted of [
      "attempts",
      "jobs",
      "Time to granted",
      "Revocations",
      "breakers",
      "HTTP",
    ]) {
      assert.match(titles, new RegExp(wanted));
    }
  });
});
