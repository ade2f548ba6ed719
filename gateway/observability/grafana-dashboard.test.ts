import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { PROTOCOLS, TrafficMetrics } from "./traffic";

interface Dashboard {
  templating: { list: { name: string; query: unknown }[] };
  panels: { title: string; targets: { expr: string }[] }[];
}

describe("the Grafana dashboard", () => {
  const dashboard = JSON.parse(
    readFileSync(join(__dirname, "grafana-dashboard.json"), "utf8"),
  ) as Dashboard;
  const names = new Set(
    new TrafficMetrics()
      .toJSON()
      .flatMap(({ name }) => [name, `${name}_bucket`, `${name}_count`, `${name}_sum`]),
  );

  it("plots QPS, success rate, RT percentiles and bytes per host", () => {
    const titles = dashboard.panels.map(p => p.title).join("\n");
    for (const wanted of ["QPS", "Success rate", "Response time", "Bytes"]) {
      assert.match(titles, new RegExp(wanted));
    }
  });
  it("queries only metrics the gateway exports, by labels it sets", () => {
    for (const panel of dashboard.panels) {
      for (const { expr } of panel.targets) {
        for (const [metric] of expr.matchAll(/bulwark_[a-z_]+/g)) {
          assert.ok(names.has(metric), `${panel.title}: ${metric} is not exported`);
        }
        for (const [, label] of expr.matchAll(/[{,(]\s*([a-z_]+)\s*(?:=~|!=|=)/g)) {
          assert.ok(
            ["host", "status_class", "variant", "ingress", "service", "protocol"].includes(
              label ?? "",
            ),
            `${panel.title}: label ${label} is not set`,
          );
        }
      }
    }
  });
  it("filters every panel by the protocol variable, whose choices are the label's fixed values", () => {
    const variable = dashboard.templating.list.find(v => v.name === "protocol");
    assert.equal(variable?.query, [...PROTOCOLS, "other"].join(","));
    for (const panel of dashboard.panels) {
      for (const { expr } of panel.targets) {
        for (const [selector] of expr.matchAll(/bulwark_[a-z_]+\{[^}]*\}/g)) {
          assert.match(selector, /protocol=~"\$protocol"/, `${panel.title}: ${selector}`);
        }
      }
    }
  });
  it("plots requests per host and protocol", () => {
    const byProtocol = dashboard.panels.filter(p =>
      p.targets.some(t =>
        /sum by \(host, protocol\) \(rate\(bulwark_gateway_requests_total/.test(t.expr),
      ),
    );
    assert.equal(byProtocol.length, 1);
  });
});
