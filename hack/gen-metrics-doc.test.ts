import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { METRICS_DOC, renderMetricsDoc, sections } from "./gen-metrics-doc";

describe("docs/metrics.md", () => {
  it("matches the metrics the processes register (run `npm run gen:docs`)", () => {
    assert.equal(readFileSync(METRICS_DOC, "utf8"), renderMetricsDoc());
  });
  it("names each metric once across the processes, every one with a type and a meaning", () => {
    const rows = sections().flatMap(section => section.rows);
    const names = rows.map(row => row.name);
    assert.deepEqual(
      names.filter((name, i) => names.indexOf(name) !== i),
      [],
    );
    for (const row of rows) {
      assert.match(row.name, /^bulwark_[a-z_]+$/, row.name);
      assert.ok(["counter", "gauge", "histogram"].includes(row.type), `${row.name}: ${row.type}`);
      assert.ok(row.help.length > 10, `${row.name} has a meaning`);
    }
  });
  it("links each Grafana dashboard it names, and each is in the repository", () => {
    const linked = new Set(sections().flatMap(section => section.dashboards));
    assert.equal(linked.size, 4);
    for (const path of linked) assert.ok(existsSync(join(__dirname, "..", path)), path);
  });
});
