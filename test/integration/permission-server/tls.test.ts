// TLS between the init client and the permission server, with the serving Secret made the way a
// user without cert-manager makes it (`bulwark permission tls`, against the real API server): the
// init client given the Secret's ca.crt is granted over HTTPS; one given another CA refuses before
// sending its token; a renewal is picked up by the running server (the CA is kept, so the same
// bundle still verifies it); with no certificate configured the server speaks plain HTTP. The
// metrics port answers /metrics in plain HTTP while the API port refuses plain HTTP.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect } from "node:tls";
import { waitUntil } from "../../harness/wait";
import { createPki } from "../../../hack/control-plane/pki";
import { main as cli } from "../../../cli/main";
import type { AuthzApi } from "../../harness/authz-api";
import { testCluster, testNamespace } from "../../harness/cluster";
import type { RunningServer } from "../../../permission-server/server";
import {
  createPod,
  deleteProvider,
  podToken,
  runInitFor,
  setPodIp,
  startAuthzProvider,
  startReplicas,
} from "./helpers";

const cluster = testCluster();
const SECRET = "bulwark-permission-server-tls";

/** The SHA-256 fingerprint of the certificate a TLS server at `url` presents. */
function servedFingerprint(url: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(
      { host: hostname, port: Number(port), rejectUnauthorized: false },
      () => {
        resolve(socket.getPeerCertificate().fingerprint256);
        socket.end();
      },
    );
    socket.on("error", reject);
  });
}

describe("permission server: TLS with the CLI-made Secret", () => {
  let ns: string;
  let drop: () => Promise<void>;
  let authz: AuthzApi;
  let provider: string;
  let dir: string;
  let server: RunningServer;
  let ca: string;
  const out: string[] = [];

  /** Runs `bulwark permission tls` for `ns`; writes the Secret's pair where the server reads it. */
  async function makeSecret(): Promise<{ ca: string; cert: string }> {
    const code = await cli(
      ["permission", "tls", "--server-namespace", ns, "--san", "IP:127.0.0.1", "--days", "30"],
      s => out.push(s),
      s => out.push(s),
    );
    assert.equal(code, 0);
    const secret = await cluster.core.readNamespacedSecret({ name: SECRET, namespace: ns });
    assert.equal(secret.type, "kubernetes.io/tls");
    const data = (key: string): string =>
      Buffer.from(secret.data?.[key] ?? "", "base64").toString("utf8");
    // What kubelet does with the mounted Secret: the files change under the running server.
    writeFileSync(join(dir, "tls.crt"), data("tls.crt"));
    writeFileSync(join(dir, "tls.key"), data("tls.key"));
    return { ca: data("ca.crt"), cert: data("tls.crt") };
  }

  before(async () => {
    [ns, drop] = await testNamespace(cluster, "perm-tls");
    ({ authz, provider } = await startAuthzProvider(cluster, ns, { grantLatencyMs: 100 }, 2));
    dir = mkdtempSync(join(tmpdir(), "bulwark-ps-tls-"));
    ({ ca } = await makeSecret());
    [server] = (await startReplicas(cluster, ns, 1, {
      BULWARK_TLS_CERT_PATH: join(dir, "tls.crt"),
      BULWARK_TLS_KEY_PATH: join(dir, "tls.key"),
      BULWARK_TLS_RELOAD_INTERVAL: "200ms",
      BULWARK_PERMISSION_METRICS_PORT: "0",
    })) as [RunningServer];
  });

  after(async () => {
    await server.stop();
    await authz.close();
    await deleteProvider(cluster, provider);
    await drop();
    rmSync(dir, { recursive: true, force: true });
  });

  async function startedPod(name: string, ip: string) {
    await createPod(cluster, ns, name, "readers");
    const pod = await setPodIp(cluster, ns, name, ip);
    return { pod, token: await podToken(cluster, pod) };
  }

  it("serves HTTPS; the init client given the Secret's ca.crt is granted", async () => {
    assert.match(server.url, /^https:\/\//);
    assert.match(out.join(""), /^created Secret perm-tls-\w+\/bulwark-permission-server-tls/);
    const { pod, token } = await startedPod("trusting", "127.0.6.1");
    assert.deepEqual(await runInitFor(server.url, pod, token, ca), { granted: true });
    assert.ok(authz.isGranted("127.0.6.1", "orders", "read"));
  });

  it("the metrics port answers /metrics in plain HTTP; the API port refuses plain HTTP", async () => {
    const metricsUrl = server.metricsUrl ?? "";
    assert.match(metricsUrl, /^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    const scraped = await fetch(metricsUrl);
    assert.equal(scraped.status, 200);
    assert.match(scraped.headers.get("content-type") ?? "", /^text\/plain/);
    assert.match(await scraped.text(), /^# TYPE bulwark_permission_jobs_total counter$/m);
    // Only /metrics: the API is not reachable around TLS through it.
    assert.equal((await fetch(new URL("/healthz", metricsUrl))).status, 404);
    assert.equal((await fetch(new URL("/v1/grants", metricsUrl), { method: "POST" })).status, 404);
    const plainToApi = server.url.replace(/^https:/, "http:") + "/metrics";
    await assert.rejects(fetch(plainToApi), "the API port speaks only TLS");
  });

  it("an init client given another CA refuses the server and never sends its token", async () => {
    const otherDir = join(dir, "other-ca");
    mkdirSync(otherDir);
    const other = createPki(otherDir);
    const { pod, token } = await startedPod("doubting", "127.0.6.2");
    const requests = (): Promise<string> =>
      server.metrics.registry.getSingleMetricAsString("bulwark_permission_http_requests_total");
    const before = await requests();
    const result = await runInitFor(server.url, pod, token, other.caPem);
    assert.deepEqual(result, {
      granted: false,
      reason:
        "refused: the permission server's certificate is not trusted (UNABLE_TO_VERIFY_LEAF_SIGNATURE)",
    });
    assert.equal(await requests(), before, "no request reached the server");
    assert.equal(authz.isGranted("127.0.6.2", "orders", "read"), false);
  });

  it("a renewed Secret is served without a restart, and the kept CA still verifies it", async () => {
    const served = await servedFingerprint(server.url);
    out.splice(0);
    const renewed = await makeSecret();
    assert.match(out.join(""), /^renewed Secret .* \(reused\)/);
    assert.equal(renewed.ca, ca, "the CA is kept");
    await waitUntil(
      "the server to serve the renewed certificate",
      async () => (await servedFingerprint(server.url)) !== served,
      10_000,
      100,
    );
    const { pod, token } = await startedPod("after-renewal", "127.0.6.3");
    assert.deepEqual(await runInitFor(server.url, pod, token, ca), { granted: true });
  });

  it("with no certificate configured, the server speaks plain HTTP and init is granted", async () => {
    const [plain] = (await startReplicas(cluster, ns, 1)) as [RunningServer];
    try {
      assert.match(plain.url, /^http:\/\//);
      const { pod, token } = await startedPod("plain", "127.0.6.4");
      assert.deepEqual(await runInitFor(plain.url, pod, token), { granted: true });
    } finally {
      await plain.stop();
    }
  });
});
