// Real HTTP/2 clients against the gateway's HTTPS listener: curl (libcurl's nghttp2) and nghttp
// (Debian's nghttp2-client, hack/system-packages.sh), with a canary, a body, and many streams on
// one connection.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { after, before, describe, it } from "node:test";
import { startDataPlane, type DataPlane } from "../../data-plane";
import { endpointSlice, ingress, view } from "../../routing/testkit";
import { namedBackend, type Backend } from "../testkit";

const run = promisify(execFile);
const P = "nginx.ingress.kubernetes.io/";

describe("data plane: HTTP/2 with curl and nghttp", () => {
  let main: Backend;
  let beta: Backend;
  let plane: DataPlane;
  let port: number;

  before(async () => {
    [main, beta] = [await namedBackend("main"), await namedBackend("beta")];
    plane = await startDataPlane({ httpPort: 0, httpsPort: 0, host: "127.0.0.1" });
    port = plane.httpsPort!;
    const slice = (service: string, backend: Backend) =>
      endpointSlice({
        service,
        ports: [{ port: backend.port }],
        endpoints: [{ address: "127.0.0.1" }],
      });
    await plane.apply(
      view(
        1,
        [
          ingress({
            name: "shop",
            rules: [{ host: "shop.test", paths: [{ path: "/", service: "main" }] }],
          }),
          ingress({
            name: "shop-beta",
            created: "2025-01-02T00:00:00Z",
            annotations: { [`${P}canary`]: "true", [`${P}canary-by-header`]: "X-Beta" },
            rules: [{ host: "shop.test", paths: [{ path: "/", service: "beta" }] }],
          }),
          ingress({
            name: "old",
            annotations: { "bulwark.dev/http2": "false" },
            rules: [{ host: "old.test", paths: [{ path: "/", service: "main" }] }],
          }),
        ],
        [slice("main", main), slice("beta", beta)],
      ),
    );
  });
  after(async () => {
    await plane.close({ drainMs: 200 });
    await Promise.all([main.close(), beta.close()]);
  });

  /** curl --http2 to `host` on the gateway; the protocol version, the status and the body. */
  async function curl(host: string, path: string, args: string[] = []) {
    const { stdout } = await run("curl", [
      "--http2",
      "-sk",
      "--max-time",
      "10",
      "--resolve",
      `${host}:${port}:127.0.0.1`,
      "-w",
      "\n%{http_version} %{http_code}",
      ...args,
      `https://${host}:${port}${path}`,
    ]);
    const cut = stdout.lastIndexOf("\n");
    const [version, status] = stdout.slice(cut + 1).split(" ");
    return { version, status: Number(status), body: stdout.slice(0, cut) };
  }

  it("curl --http2 negotiates h2 and is routed; the canary header picks the canary", async () => {
    const plain = await curl("shop.test", "/a?b=1");
    assert.deepEqual([plain.version, plain.status], ["2", 200]);
    assert.equal(JSON.parse(plain.body).name, "main");
    assert.equal(JSON.parse(plain.body).url, "/a?b=1");
    const canary = await curl("shop.test", "/", ["-H", "X-Beta: always"]);
    assert.equal(JSON.parse(canary.body).name, "beta");
  });

  it("curl --http2 uploads a body (without content-length: chunked upstream)", async () => {
    const sized = await curl("shop.test", "/up", ["--data-binary", "hello h2"]);
    assert.equal(JSON.parse(sized.body).body, "hello h2");
    const dir = mkdtempSync(join(tmpdir(), "h2-peer-"));
    writeFileSync(join(dir, "body"), "streamed body");
    const streamed = await curl("shop.test", "/up", [
      "-H",
      "Transfer-Encoding: chunked",
      "--data-binary",
      `@${join(dir, "body")}`,
    ]);
    assert.equal(streamed.version, "2");
    assert.equal(JSON.parse(streamed.body).body, "streamed body");
  });

  it("curl --http2 to a host with bulwark.dev/http2: false speaks HTTP/1.1", async () => {
    const answer = await curl("old.test", "/");
    assert.deepEqual([answer.version, answer.status], ["1.1", 200]);
  });

  it("nghttp: 50 streams on one connection, each answered 200 by the routed backend", async () => {
    const { stdout } = await run("nghttp", [
      "-nvy",
      "-m",
      "50",
      "-t",
      "10",
      "-H",
      ":authority: shop.test",
      `https://127.0.0.1:${port}/many`,
    ]);
    const statuses = stdout
      .split("\n")
      .filter(line => /recv \(stream_id=\d+\) :status: /.test(line));
    assert.equal(statuses.length, 50);
    assert.ok(
      statuses.every(line => line.endsWith(":status: 200")),
      statuses.join("\n"),
    );
    assert.match(stdout, /SETTINGS_MAX_CONCURRENT_STREAMS\(0x03\):128/);
  });

  it("nghttp: a HEAD and a POST with a body", async () => {
    const head = await run("nghttp", [
      "-vy",
      "-H",
      ":method: HEAD",
      "-H",
      ":authority: shop.test",
      `https://127.0.0.1:${port}/h`,
    ]);
    assert.match(head.stdout, /:status: 200/);
    const dir = mkdtempSync(join(tmpdir(), "h2-peer-"));
    writeFileSync(join(dir, "body"), "from nghttp");
    const post = await run("nghttp", [
      "-y",
      "-d",
      join(dir, "body"),
      "-H",
      ":authority: shop.test",
      `https://127.0.0.1:${port}/p`,
    ]);
    const echo = JSON.parse(post.stdout) as {
      method: string;
      body: string;
      headers: Record<string, string>;
    };
    assert.deepEqual([echo.method, echo.body], ["POST", "from nghttp"]);
    assert.equal(echo.headers["content-length"], "11");
  });
});
