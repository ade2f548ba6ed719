import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { once } from "node:events";
import type { AddressInfo } from "node:net";
import { Counter, Registry } from "prom-client";
import { serveMetrics } from "./metrics-server";

describe("serveMetrics", () => {
  it("serves the registry's text at /metrics and 404 elsewhere", async t => {
    const registry = new Registry();
    new Counter({ name: "bulwark_test_total", help: "a test counter", registers: [registry] }).inc(
      3,
    );
    const lines: string[] = [];
    const server = serveMetrics(registry, 0, "127.0.0.1", {
      info: message => void lines.push(message),
      error: message => void lines.push(message),
    });
    t.after(() => server.close());
    await once(server, "listening");
    const { port } = server.address() as AddressInfo;
    const metrics = await fetch(`http://127.0.0.1:${port}/metrics`);
    assert.equal(metrics.status, 200);
    assert.match(metrics.headers.get("content-type") ?? "", /^text\/plain/);
    assert.match(await metrics.text(), /^bulwark_test_total 3$/m);
    const other = await fetch(`http://127.0.0.1:${port}/`);
    assert.equal(other.status, 404);
    assert.deepEqual(lines, ["serving Bulwark metrics"]);
  });
  it("given a port in use, reports the failure to its logger instead of throwing", async t => {
    const first = serveMetrics(new Registry(), 0, "127.0.0.1", { info: () => {}, error: () => {} });
    t.after(() => first.close());
    await once(first, "listening");
    const { port } = first.address() as AddressInfo;
    const failed = new Promise<Record<string, unknown>>(resolve => {
      serveMetrics(new Registry(), port, "127.0.0.1", {
        info: () => {},
        error: (_message, fields) => resolve(fields),
      });
    });
    const error = await failed;
    assert.equal(error.port, port);
    assert.match(String(error.err), /EADDRINUSE/);
  });
});
