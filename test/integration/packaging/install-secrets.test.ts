// `bulwark install secrets`, as a user runs it (bin/bulwark.js, --kubeconfig) against the real API
// server: the Secrets the workloads wait for, named as the release names them, made once and kept
// on every later run (an HMAC key never changes under the daemons), the certificate renewed only
// when asked or close to its end, and a failure said in one line with the exit code the CLI uses.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { X509Certificate } from "node:crypto";
import { join } from "node:path";
import { promisify } from "node:util";
import type { V1Secret } from "@kubernetes/client-node";
import { ROOT } from "../../../packaging/build";
import { testCluster, testNamespace } from "../../harness/cluster";

const cluster = testCluster();
const BIN = join(ROOT, "bin", "bulwark.js");

async function bulwark(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(
      process.execPath,
      [BIN, ...args, "--kubeconfig", cluster.kubeconfigPath],
      { cwd: ROOT, env: { ...process.env, KUBECONFIG: "" } },
    );
    return { code: 0, out: stdout, err: stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, out: failed.stdout, err: failed.stderr };
  }
}

async function secret(namespace: string, name: string): Promise<V1Secret> {
  return cluster.core.readNamespacedSecret({ namespace, name });
}

const text = (s: V1Secret, key: string): string =>
  Buffer.from(s.data?.[key] ?? "", "base64").toString("utf8");

describe("bulwark install secrets", () => {
  let ns: string;
  let drop: () => Promise<void>;
  before(async () => {
    [ns, drop] = await testNamespace(cluster, "install-secrets");
  });
  after(async () => drop());

  const names = {
    serving: "edge-bulwark-permission-server-tls",
    ca: "edge-bulwark-permission-server-tls-ca",
    hmac: "edge-bulwark-edge-health-hmac",
  };

  it("makes every Secret of release edge, named <release>-bulwark-..., for its Service", async () => {
    const run = await bulwark("install", "secrets", "-n", ns, "--release", "edge");
    assert.equal(run.code, 0, run.err);
    const lines = run.out.trim().split("\n");
    assert.equal(lines.length, 2, run.out);
    assert.match(lines[0] ?? "", new RegExp(`^created Secret ${ns}/${names.serving} for `));
    assert.match(
      lines[0] ?? "",
      new RegExp(`signed by the CA in Secret ${ns}/${names.ca} \\(new\\)`),
    );
    assert.equal(lines[1], `created Secret ${ns}/${names.hmac} (hmackey: a new random key)`);

    const serving = await secret(ns, names.serving);
    assert.equal(serving.type, "kubernetes.io/tls");
    assert.equal(serving.metadata?.labels?.["app.kubernetes.io/instance"], "edge");
    assert.equal(serving.metadata?.labels?.["app.kubernetes.io/part-of"], "bulwark");
    const leaf = new X509Certificate(text(serving, "tls.crt"));
    const ca = new X509Certificate(text(serving, "ca.crt"));
    assert.ok(leaf.verify(ca.publicKey), "signed by the ca.crt beside it");
    assert.equal(
      leaf.checkHost(`edge-bulwark-permission-server.${ns}.svc`),
      `edge-bulwark-permission-server.${ns}.svc`,
    );
    assert.equal(text(await secret(ns, names.ca), "tls.crt"), text(serving, "ca.crt"));
    const hmac = await secret(ns, names.hmac);
    assert.equal(hmac.type, "Opaque");
    assert.match(text(hmac, "hmackey"), /^[0-9a-f]{64}$/);
  });

  it("run again, keeps every Secret as it is", async () => {
    const before = await Promise.all(Object.values(names).map(name => secret(ns, name)));
    const run = await bulwark("install", "secrets", "-n", ns, "--release", "edge");
    assert.equal(run.code, 0, run.err);
    assert.match(run.out, new RegExp(`^kept Secret ${ns}/${names.serving}: valid until `, "m"));
    assert.match(run.out, new RegExp(`^kept Secret ${ns}/${names.hmac}: it has hmackey$`, "m"));
    const afterRun = await Promise.all(Object.values(names).map(name => secret(ns, name)));
    assert.deepEqual(
      afterRun.map(s => s.metadata?.resourceVersion),
      before.map(s => s.metadata?.resourceVersion),
      "nothing was written",
    );
  });

  it("--renew renews the certificate with the same CA and keeps the HMAC key", async () => {
    const [serving, hmac] = [await secret(ns, names.serving), await secret(ns, names.hmac)];
    const run = await bulwark("install", "secrets", "-n", ns, "--release", "edge", "--renew");
    assert.equal(run.code, 0, run.err);
    assert.match(run.out, /^renewed Secret .*\(reused\); renewed because --renew$/m);
    const renewed = await secret(ns, names.serving);
    assert.notEqual(text(renewed, "tls.crt"), text(serving, "tls.crt"));
    assert.equal(text(renewed, "ca.crt"), text(serving, "ca.crt"), "the CA pods carry stays");
    assert.equal(text(await secret(ns, names.hmac), "hmackey"), text(hmac, "hmackey"));
  });

  it("renews a certificate close to its end; adds a missing key beside the Secret's others", async () => {
    // A 10-day certificate, as `permission tls --days 10` makes it, and an HMAC Secret without hmackey.
    const short = await bulwark(
      "permission",
      "tls",
      "--server-namespace",
      ns,
      "--release",
      "edge",
      "--days",
      "10",
    );
    assert.equal(short.code, 0, short.err);
    await cluster.core.replaceNamespacedSecret({
      namespace: ns,
      name: names.hmac,
      body: {
        metadata: { name: names.hmac, namespace: ns },
        data: { note: Buffer.from("kept").toString("base64") },
      },
    });
    const run = await bulwark("install", "secrets", "-n", ns, "--release", "edge");
    assert.equal(run.code, 0, run.err);
    assert.match(run.out, /; renewed because it is valid until \S+, within 30 days$/m);
    assert.match(run.out, new RegExp(`^added hmackey to Secret ${ns}/${names.hmac}`, "m"));
    const hmac = await secret(ns, names.hmac);
    assert.equal(text(hmac, "note"), "kept");
    assert.match(text(hmac, "hmackey"), /^[0-9a-f]{64}$/);
    const leaf = new X509Certificate(text(await secret(ns, names.serving), "tls.crt"));
    const days = (new Date(leaf.validTo).getTime() - Date.now()) / 86_400_000;
    assert.ok(days > 300, `a year's certificate again (${days} days)`);
  });

  it("release bulwark keeps the names of earlier versions", async () => {
    const run = await bulwark("install", "secrets", "-n", ns);
    assert.equal(run.code, 0, run.err);
    assert.match(run.out, new RegExp(`^created Secret ${ns}/bulwark-permission-server-tls `, "m"));
    assert.match(run.out, new RegExp(`^created Secret ${ns}/bulwark-edge-health-hmac `, "m"));
    await secret(ns, "bulwark-permission-server-tls-ca");
  });

  it("fails in one line, exit 1, when the namespace is not there; exit 2 for a bad command line", async () => {
    const missing = await bulwark("install", "secrets", "-n", `${ns}-absent`);
    assert.equal(missing.code, 1);
    assert.equal(
      missing.err,
      `bulwark: namespace ${ns}-absent not found: install Bulwark first (docs/install.md), or pass -n\n`,
    );
    const wrong = await bulwark("install", "secrets", "-n", ns, "--days", "0");
    assert.equal(wrong.code, 2);
    assert.match(wrong.err, /^bulwark: --days must be a whole number of days >= 1, got "0"\n$/);
  });
});
