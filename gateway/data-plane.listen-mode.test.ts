// Several workers sharing the ports: with reuse-port each binds its own socket (the kernel
// spreads connections), with round robin the primary holds the one socket. Counted in
// /proc/net/tcp, the kernel's own list of listening sockets.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { startDataPlane, type DataPlane } from "./data-plane";
import { effectiveListenMode, type ListenMode } from "./listen-mode";
import { ask, backendOf, hostsView, namedBackend } from "./proxy/testkit";
import { makeCertificate } from "../test/fixtures/certificates";
import { waitUntil } from "../test/harness/wait";

/** TCP sockets in LISTEN state (0A) on `port`, any address. */
function listeningSockets(port: number): number {
  const hexPort = port.toString(16).toUpperCase().padStart(4, "0");
  return readFileSync("/proc/net/tcp", "latin1")
    .split("\n")
    .slice(1)
    .map(line => line.trim().split(/\s+/))
    .filter(fields => fields[1]?.endsWith(`:${hexPort}`) && fields[3] === "0A").length;
}

async function servesOnFreshConnections(plane: DataPlane): Promise<void> {
  for (let i = 0; i < 6; i++)
    assert.equal(backendOf(await ask(plane.httpPort, "w.test", "/")), "a");
}

async function withTwoWorkers(mode: ListenMode, check: (plane: DataPlane) => Promise<void>) {
  const backend = await namedBackend("a");
  const made = makeCertificate({ key: "ecdsa", dnsNames: ["default.test"] });
  const plane = await startDataPlane({
    httpPort: 0,
    httpsPort: 0,
    host: "127.0.0.1",
    workers: 2,
    listenMode: mode,
    defaultCertificates: [{ cert: made.certPem, key: made.keyPem }],
  });
  try {
    await plane.apply(hostsView("a", backend.port, { w: {} }));
    await check(plane);
  } finally {
    await plane.close({ drainMs: 200 });
    await backend.close();
  }
}

describe("data plane: how 2 workers share the ports", () => {
  it("reuse-port: a socket per worker on each port (round robin's one on a Node.js without it), the same ports for a replacement", async () => {
    // Node 20 has no reusePort: the setting falls back to the primary's round robin there.
    const sockets = effectiveListenMode("reuse-port") === "reuse-port" ? 2 : 1;
    await withTwoWorkers("reuse-port", async plane => {
      assert.equal(listeningSockets(plane.httpPort), sockets);
      assert.equal(listeningSockets(plane.httpsPort!), sockets);
      await servesOnFreshConnections(plane);
      const victim = plane.status().workers[0]!.pid;
      process.kill(victim, "SIGKILL");
      await waitUntil("a replacement worker serving the view", () => {
        const workers = plane.status().workers;
        return workers.length === 2 && workers.every(w => w.pid !== victim && w.version === 1);
      });
      assert.equal(listeningSockets(plane.httpPort), sockets);
      await servesOnFreshConnections(plane);
    });
  });

  it("round-robin (the default): one socket per port, held by the primary", async () => {
    await withTwoWorkers("round-robin", async plane => {
      assert.equal(listeningSockets(plane.httpPort), 1);
      assert.equal(listeningSockets(plane.httpsPort!), 1);
      await servesOnFreshConnections(plane);
    });
  });
});
