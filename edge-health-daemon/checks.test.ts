// The check plugins against real local servers: a kubelet stand-in that wants a bearer token
// (plain HTTP here; the HTTPS kubelet is in checks-kubelet-tls.test.ts), a daemon /healthz, and a
// TCP listener.
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import http from "node:http";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { makeProber } from "./checks";
import type { CheckPlugin } from "./settings";

const listen = (server: http.Server | net.Server): Promise<number> =>
  new Promise(resolve =>
    server.listen(0, "127.0.0.1", () => resolve((server.address() as net.AddressInfo).port)),
  );

describe("check plugins", () => {
  const tokenFile = join(mkdtempSync(join(tmpdir(), "edge-checks-")), "token");
  writeFileSync(tokenFile, "s3cret-token\n");
  const seenAuth: string[] = [];
  const kubelet = http.createServer((req, res) => {
    seenAuth.push(req.headers.authorization ?? "");
    res.statusCode =
      req.url === "/healthz" && req.headers.authorization === "Bearer s3cret-token" ? 200 : 401;
    res.end();
  });
  const daemon = http.createServer((req, res) => {
    res.statusCode = req.url === "/healthz" ? 200 : 404;
    res.end();
  });
  const tcp = net.createServer(socket => socket.end());
  let ports = { kubelet: 0, daemon: 0, tcp: 0, closed: 0 };

  before(async () => {
    ports = {
      kubelet: await listen(kubelet),
      daemon: await listen(daemon),
      tcp: await listen(tcp),
      closed: 0,
    };
    const probe = net.createServer();
    ports.closed = await listen(probe);
    probe.close();
  });
  after(() => {
    kubelet.close();
    daemon.close();
    tcp.close();
  });

  const plugin = (p: Partial<CheckPlugin> & Pick<CheckPlugin, "kind" | "port">): CheckPlugin => ({
    weight: 1,
    timeoutMs: 500,
    retries: 0,
    scheme: "http",
    tokenFile,
    ...p,
  });

  it("kubelet: sends the bearer token from the file and passes on 200", async () => {
    const prober = makeProber(
      [plugin({ kind: "kubelet", port: ports.kubelet })],
      () => "127.0.0.1",
    );
    const [outcome] = await prober.probe("127.0.0.1");
    assert.equal(outcome?.ok, true, outcome?.error);
    assert.equal(seenAuth.at(-1), "Bearer s3cret-token");
  });

  it("kubelet: a 401 is a failure (a wrong token never counts as healthy)", async () => {
    const other = join(mkdtempSync(join(tmpdir(), "edge-checks-")), "token");
    writeFileSync(other, "wrong");
    const prober = makeProber(
      [plugin({ kind: "kubelet", port: ports.kubelet, tokenFile: other, retries: 2 })],
      () => undefined,
    );
    const [outcome] = await prober.probe("127.0.0.1");
    assert.equal(outcome?.ok, false);
    assert.match(outcome?.error ?? "", /^HTTP 401: the kubelet refused the credentials/);
  });

  it("daemon and tcp pass against live servers, fail against a closed port", async () => {
    const live = makeProber(
      [plugin({ kind: "daemon", port: ports.daemon }), plugin({ kind: "tcp", port: ports.tcp })],
      () => undefined,
    );
    assert.deepEqual(
      (await live.probe("127.0.0.1")).map(o => o.ok),
      [true, true],
    );
    const dead = makeProber(
      [plugin({ kind: "daemon", port: ports.closed }), plugin({ kind: "tcp", port: ports.closed })],
      () => undefined,
    );
    assert.deepEqual(
      (await dead.probe("127.0.0.1")).map(o => o.ok),
      [false, false],
    );
  });

  it("a peer that never answers fails within the timeout", async () => {
    const silent = net.createServer(() => {}); // accepts, never replies
    const port = await listen(silent);
    const prober = makeProber([plugin({ kind: "daemon", port, timeoutMs: 200 })], () => undefined);
    const [outcome] = await prober.probe("127.0.0.1");
    assert.equal(outcome?.ok, false);
    prober.close();
    silent.close();
  });
});
