// Rate and connection limits end to end: the real API server admits (or refuses) the annotations
// through the Pepr module, a real gateway process counts requests per client address (clients
// connect from different loopback addresses) and answers BULWARK_LIMIT_STATUS over the limit;
// limit-rate paces a response to the client.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { KubernetesObjectApi } from "@kubernetes/client-node";
import { ingress } from "../gateway/harness";
import { fetchWithProgress } from "../../../gateway/proxy/testkit";
import { rejection, testCluster } from "../../harness/cluster";
import { waitUntil } from "../../harness/wait";
import {
  echoOf,
  nginx,
  openGateway,
  openNamespace,
  scrape,
  total,
  type TrafficGateway,
  type TrafficNamespace,
} from "./helpers";

describe("rate limits end to end", () => {
  let space: TrafficNamespace;
  let served: TrafficGateway;

  before(async () => {
    space = await openNamespace("traffic-limits", ["web"]);
    const ns = space.ns;
    const route = (name: string, annotations: Record<string, string>) =>
      ingress(ns, name, { host: `${name}.test`, service: "web", annotations: nginx(annotations) });
    await space.apply([
      route("open", {}),
      // 1 r/m leaks 16 thousandths of a request a second: the bucket stays full during the test.
      route("limited", {
        "limit-rpm": "1",
        "limit-burst-multiplier": "2",
        "limit-whitelist": "127.0.0.5",
      }),
      route("paced", { "limit-rate": "1" }),
    ]);
    served = await openGateway(
      ns,
      { BULWARK_LIMIT_STATUS: "429" },
      { host: "open.test", backend: "web" },
    );
  });

  after(async () => {
    await served?.close();
    await space?.close();
  });

  const statuses = async (localAddress: string, n: number) => {
    const out: number[] = [];
    for (let i = 0; i < n; i++) {
      out.push((await served.client.send("limited.test", "/", { localAddress })).status);
    }
    return out;
  };

  it("serves a fresh client 1 + burst requests, then answers BULWARK_LIMIT_STATUS", async () => {
    assert.deepEqual(await statuses("127.0.0.2", 4), [200, 200, 200, 429]);
    const other = await served.client.send("limited.test", "/", { localAddress: "127.0.0.3" });
    assert.equal(echoOf(other)?.name, "web", "another client has its own count");
    const labels = { host: "limited.test", decision: "rate-limited" };
    await waitUntil("the refusal counted by decision", async () => {
      const samples = await scrape(served.gateway.adminPort);
      return total(samples, "bulwark_gateway_answers_total", labels) === 1;
    });
  });

  it("does not limit the allowlist (limit-whitelist, the older name)", async () => {
    assert.deepEqual(await statuses("127.0.0.5", 5), [200, 200, 200, 200, 200]);
  });

  it("paces a response at limit-rate (1 KiB/s), and it arrives whole", async () => {
    // The echo backend answers the request's headers: a padded header makes a 3 KiB body.
    const pad = "x".repeat(3000);
    const port = served.gateway.httpPort;
    const { body, progress } = await fetchWithProgress(port, "paced.test", false, { "x-pad": pad });
    const echo = JSON.parse(body.toString()) as { name: string; headers: Record<string, string> };
    assert.equal(echo.name, "web");
    assert.equal(echo.headers["x-pad"], pad);
    // The schedule's bound, plus the one slice (a tenth of a second's worth) it lets go when due.
    for (const { ms, bytes } of progress) {
      assert.ok(bytes <= (1024 * ms) / 1000 + 103, `${bytes} bytes by ${ms.toFixed(0)} ms`);
    }
  });

  it("refuses bad values at admission, naming the annotation and what was expected", async () => {
    const objects = KubernetesObjectApi.makeApiClient(testCluster().kc);
    const bad = ingress(space.ns, "bad-limit", {
      host: "bad.test",
      service: "web",
      annotations: nginx({
        "limit-rps": "10r/s",
        "limit-allowlist": "office",
        "limit-rate": "100k",
      }),
    });
    const message = await rejection(() => objects.create(bad));
    assert.match(message, /denied the request/);
    assert.match(
      message,
      /metadata\.annotations\["nginx\.ingress\.kubernetes\.io\/limit-rps"\]: expected an integer between 0 and 1000000, got \\?"10r\/s\\?"/,
    );
    assert.match(
      message,
      /limit-allowlist"\]: expected a comma-separated list of IP addresses or CIDRs/,
    );
    assert.match(message, /limit-rate"\]: expected an integer between 0 and \d+, got \\?"100k/);
  });
});
