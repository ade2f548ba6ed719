import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import type { Registry } from "prom-client";
import { gatewayMetrics } from "../../gateway/admin/metrics";
import { registry } from "../pepr/metrics";
import { guardMetrics } from "./metrics";

interface Dashboard {
  panels: { title: string; targets: { expr: string; legendFormat?: string }[] }[];
}

/** Each registered metric's name (and a histogram's series) with the labels it sets. */
function labelsByName(...registries: Registry[]): Map<string, Set<string>> {
  const byName = new Map<string, Set<string>>();
  for (const reg of registries) {
    for (const metric of reg.getMetricsAsArray()) {
      const { name, labelNames } = metric as unknown as { name: string; labelNames?: string[] };
      const type = (metric as unknown as { type?: string }).type;
      byName.set(name, new Set(labelNames ?? []));
      if (type === "histogram") {
        byName.set(`${name}_bucket`, new Set([...(labelNames ?? []), "le"]));
        byName.set(`${name}_count`, new Set(labelNames ?? []));
        byName.set(`${name}_sum`, new Set(labelNames ?? []));
      }
    }
  }
  return byName;
}

describe("the checksum guard's Grafana dashboard", () => {
  const dashboard = JSON.parse(
    readFileSync(join(__dirname, "grafana-dashboard.json"), "utf8"),
  ) as Dashboard;

  it("queries only metrics the module or the gateway exports, by labels they set", () => {
    assert.ok(guardMetrics.consistent, "the module's guard metrics are registered");
    const exported = labelsByName(registry, gatewayMetrics().registry);
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

  it("shows consistency, would-refuse, refused updates, untrusted objects and the served view's age", () => {
    const titles = dashboard.panels.map(p => p.title).join("\n");
    for (const wanted of ["Consistent", "Would refuse", "refused", "Untrusted", "Age", "verify"]) {
      assert.match(titles, new RegExp(wanted));
    }
  });
});
