// The access log's ingress-nginx fields and the request id, over real sockets, on both the fast
// path and Node's HTTP path (a Connection header naming another header sends a request to Node's).
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { waitUntil } from "../../test/harness/wait";
import { startDataPlane, type DataPlane } from "../data-plane";
import { endpointSlice, ingress, view } from "../routing/testkit";
import { DEFAULT_FRONT_DOOR } from "./request-rules";
import { ask, namedBackend, type AskOptions, type Backend } from "./testkit";

const P = "nginx.ingress.kubernetes.io/";

const PATHS: [string, Record<string, string>][] = [
  ["fast path", {}],
  ["Node's path", { connection: "keep-alive, x-via", "x-via": "node" }],
];

type Entry = Record<string, unknown>;

describe("data plane: access log fields and X-Request-ID", () => {
  let main: Backend;
  let plane: DataPlane;
  const logPath = join(mkdtempSync(join(tmpdir(), "access-")), "access.log");

  before(async () => {
    main = await namedBackend("main");
    plane = await startDataPlane({
      httpPort: 0,
      host: "127.0.0.1",
      defaultCertificates: [],
      observe: { metrics: true, accessLog: true, accessLogPath: logPath },
      // The test's client is a trusted proxy: its X-Forwarded-For names the client.
      frontDoor: { ...DEFAULT_FRONT_DOOR, trustedProxies: ["127.0.0.1/32"] },
    });
    await plane.apply(
      view(
        1,
        [
          ingress({
            name: "log",
            rules: [{ host: "log.test", paths: [{ path: "/", service: "main" }] }],
          }),
          ingress({
            name: "retry",
            rules: [{ host: "retry.test", paths: [{ path: "/", service: "flaky" }] }],
          }),
          ingress({
            name: "moved",
            annotations: { [`${P}temporal-redirect`]: "https://new.example/" },
            rules: [{ host: "moved.test", paths: [{ path: "/", service: "main" }] }],
          }),
        ],
        [
          endpointSlice({
            service: "main",
            ports: [{ port: main.port }],
            endpoints: [{ address: "127.0.0.1" }],
          }),
          // 127.0.0.2 refuses: the backend listens on 127.0.0.1 only.
          endpointSlice({
            service: "flaky",
            ports: [{ port: main.port }],
            endpoints: [{ address: "127.0.0.2" }, { address: "127.0.0.1" }],
          }),
        ],
      ),
    );
  });
  after(async () => {
    await plane.close({ drainMs: 200 });
    await main.close();
  });

  /** The access log line of the one request to `path`, once written. */
  const entryFor = (path: string): Promise<Entry> =>
    waitUntil(`the access log line of ${path}`, () => {
      const text = existsSync(logPath) ? readFileSync(logPath, "utf8") : "";
      const lines = text.split("\n").filter(line => line.endsWith("}"));
      return lines.map(line => JSON.parse(line) as Entry).find(entry => entry.path === path);
    });

  for (const [label, via] of PATHS) {
    const send = (host: string, path: string, options: AskOptions = {}) =>
      ask(plane.httpPort, host, path, { ...options, headers: { ...via, ...options.headers } });
    const slug = label === "fast path" ? "fast" : "node";

    describe(label, () => {
      it("generates a request id, sends it upstream as X-Request-ID and logs it", async () => {
        const path = `/${slug}/generated`;
        const answer = await send("log.test", path);
        const sent = (JSON.parse(answer.body) as { headers: Record<string, string> }).headers;
        assert.match(sent["x-request-id"] ?? "", /^[0-9a-f]{32}$/);
        assert.equal((await entryFor(path)).request_id, sent["x-request-id"]);
      });

      it("keeps the client's X-Request-ID, sent upstream once", async () => {
        const path = `/${slug}/kept`;
        const answer = await send("log.test", path, { headers: { "x-request-id": "client-id-1" } });
        const sent = (JSON.parse(answer.body) as { headers: Record<string, string> }).headers;
        assert.equal(sent["x-request-id"], "client-id-1");
        assert.equal((await entryFor(path)).request_id, "client-id-1");
      });

      it("logs the client, user agent, protocol, scheme and the upstream's address, status and time", async () => {
        const path = `/${slug}/fields`;
        await send("log.test", `${path}?status=201`, { headers: { "user-agent": "probe/1.0" } });
        const entry = await entryFor(path);
        assert.deepEqual(
          [entry.remote_addr, "peer_addr" in entry, entry.user_agent],
          ["127.0.0.1", false, "probe/1.0"],
        );
        assert.deepEqual([entry.protocol, entry.scheme], ["HTTP/1.1", "http"]);
        assert.deepEqual(
          [entry.upstream_addr, entry.upstream_status],
          [`127.0.0.1:${main.port}`, 201],
        );
        assert.equal(typeof entry.upstream_response_time, "number");
        assert.ok((entry.upstream_response_time as number) >= 0);
      });

      it("lists every endpoint tried in upstream_addr, as nginx's $upstream_addr", async () => {
        // Round-robin over two endpoints: of two requests, at least one starts on the refusing
        // one (a retry moves the count on too) and is retried on the other.
        const paths = [`/${slug}/retry-1`, `/${slug}/retry-2`];
        for (const path of paths) assert.equal((await send("retry.test", path)).status, 200);
        const entries = await Promise.all(paths.map(entryFor));
        const [live, retried] = [
          `127.0.0.1:${main.port}`,
          `127.0.0.2:${main.port}, 127.0.0.1:${main.port}`,
        ];
        for (const entry of entries)
          assert.ok([live, retried].includes(String(entry.upstream_addr)));
        assert.ok(entries.some(entry => entry.upstream_addr === retried));
        assert.deepEqual(
          entries.map(e => e.upstream_status),
          [200, 200],
        );
      });

      it("logs the forwarded client as remote_addr and the trusted peer as peer_addr", async () => {
        const path = `/${slug}/forwarded`;
        await send("log.test", path, { headers: { "x-forwarded-for": "198.51.100.9" } });
        const entry = await entryFor(path);
        assert.deepEqual([entry.remote_addr, entry.peer_addr], ["198.51.100.9", "127.0.0.1"]);
      });

      it("logs the gateway's own answer without upstream fields, with its request id", async () => {
        const path = `/${slug}/redirected`;
        const answer = await send("moved.test", path, { headers: { "x-request-id": "r-own" } });
        assert.equal(answer.status, 302);
        const entry = await entryFor(path);
        assert.deepEqual(
          [
            entry.decision,
            entry.upstream_addr,
            entry.upstream_status,
            entry.upstream_response_time,
          ],
          ["temporal-redirect", "", null, null],
        );
        assert.equal(entry.request_id, "r-own");
      });
    });
  }
});
