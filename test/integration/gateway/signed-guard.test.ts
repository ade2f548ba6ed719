// Signed attestations through the real API server, the CLI and a gateway process: with
// BULWARK_CHECKSUM_REQUIRE_SIGNATURE only checksum objects signed by a key in the keys ConfigMap
// attest; an unsigned one, one signed by an untrusted key and a signed one edited afterwards are
// ignored, with the reason in /healthz; a key added to the ConfigMap is trusted at once, a removed
// one no more.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { dump, load } from "js-yaml";
import type { KubernetesObject } from "@kubernetes/client-node";
import { ROOT } from "../../../packaging/build";
import { applyOrThrow } from "../../../hack/control-plane/kube";
import { waitUntil } from "../../harness/wait";
import { testCluster, testNamespace } from "../../harness/cluster";
import {
  endpointSlice,
  ensureIngressClass,
  get,
  ingress,
  startBackend,
  startGateway,
  waitServed,
  type Backend,
  type Health,
  type RunningGateway,
} from "./harness";

const cluster = testCluster();
const HOST = "signed.example.com";
const VERSION = "nginx.ingress.kubernetes.io/version";
const KEYS = "checksum-keys";

/** `bulwark ...` as a user runs it; throws with its stderr when it fails. */
function bulwark(...args: string[]): string {
  const run = spawnSync(join(ROOT, "bin", "bulwark.js"), args, {
    cwd: ROOT,
    env: { ...process.env, KUBECONFIG: cluster.kubeconfigPath },
    encoding: "utf8",
  });
  if (run.status !== 0) throw new Error(`bulwark ${args.join(" ")}: ${run.stderr}`);
  return run.stdout;
}

describe("gateway checksum guard with signatures required", () => {
  let ns: string;
  let removeNamespace: () => Promise<void>;
  let dir: string;
  let blue: Backend;
  let green: Backend;
  let gateway: RunningGateway;

  /** The Ingress at `version`, routed to `service`, and a checksum object for it from the CLI. */
  function attest(name: string, version: string, service: string, signKey?: string) {
    const object = ingress(ns, "shop-1", {
      host: HOST,
      service,
      annotations: { [VERSION]: version },
    });
    const file = join(dir, `${name}.yaml`);
    writeFileSync(file, dump(object));
    const sign = signKey ? ["--sign-key", signKey] : [];
    const yaml = bulwark(
      "checksum",
      "compute",
      "--kind",
      "ingress",
      "--mode",
      "tengine",
      "-n",
      ns,
      "-o",
      "yaml",
      "-f",
      file,
      ...sign,
    );
    const checksum = load(yaml) as KubernetesObject;
    checksum.metadata!.name = name;
    return { ingress: object, checksum };
  }

  const keysConfigMap = (entries: Record<string, string>) => ({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: KEYS, namespace: ns },
    data: Object.fromEntries(
      Object.entries(entries).map(([k, file]) => [k, readFileSync(`${file}.pub`, "utf8")]),
    ),
  });

  const guard = async () => (await gateway.health()).guard.ingress;
  const ignoredReason = (health: Health["guard"][string] | undefined, name: string) =>
    health?.ignored?.find(i => i.name === `${ns}/${name}`)?.reason;

  before(async () => {
    [ns, removeNamespace] = await testNamespace(cluster, "gw-signed");
    dir = mkdtempSync(join(tmpdir(), "bulwark-signed-"));
    await ensureIngressClass(cluster.kc);
    [blue, green] = [await startBackend("blue"), await startBackend("green")];
    for (const key of ["first", "second", "stranger"])
      bulwark("checksum", "keygen", "--out", join(dir, key));
    await applyOrThrow(cluster.kc, [
      endpointSlice(ns, "blue", blue.port),
      endpointSlice(ns, "green", green.port),
      keysConfigMap({ "first.pem": join(dir, "first") }),
    ]);
    gateway = await startGateway({
      kubeconfigPath: cluster.kubeconfigPath,
      namespace: ns,
      env: {
        BULWARK_INGRESS_CHECKSUM: "enforce",
        BULWARK_CHECKSUM_PUBLISHER_NAMESPACES: ns,
        BULWARK_CHECKSUM_REQUIRE_SIGNATURE: "true",
        BULWARK_CHECKSUM_KEYS: `${ns}/${KEYS}`,
      },
      waitReady: false,
    });
  });

  after(async () => {
    await gateway?.stop();
    await Promise.all([blue?.close(), green?.close()]);
    await removeNamespace?.();
    rmSync(dir, { recursive: true, force: true });
  });

  it("ignores an unsigned checksum object and one signed by an untrusted key, saying why", async () => {
    const unsigned = attest("unsigned", "1", "blue");
    const stranger = attest("by-stranger", "1", "blue", join(dir, "stranger"));
    await applyOrThrow(cluster.kc, [unsigned.ingress, unsigned.checksum, stranger.checksum]);
    const health = await waitUntil("both to be ignored", async () => {
      const g = await guard();
      return ignoredReason(g, "unsigned") && ignoredReason(g, "by-stranger") ? g : undefined;
    });
    assert.equal(ignoredReason(health, "unsigned"), "Unsigned");
    assert.equal(ignoredReason(health, "by-stranger"), "BadSignature");
    assert.match(
      health?.ignored?.find(i => i.name.endsWith("/by-stranger"))?.message ?? "",
      /is not a trusted key/,
    );
    assert.equal(health?.state, "no-checksum", "nothing trustworthy is published");
    assert.equal((await fetch(`http://127.0.0.1:${gateway.adminPort}/readyz`)).status, 503);
  });

  it("serves once an object signed by a trusted key attests the cluster", async () => {
    const signed = attest("signed-first", "1", "blue", join(dir, "first"));
    await applyOrThrow(cluster.kc, [signed.checksum]);
    assert.equal((await waitServed(gateway.httpPort, HOST, "blue")).body, "blue /");
    assert.equal((await guard())?.state, "matched");
  });

  it("ignores a signed object edited after signing: the last good view keeps serving", async () => {
    // An update nobody signed, and a copy of the signed object made to attest it.
    const update = attest("edited", "2", "green");
    const signed = attest("signed-first-copy", "1", "blue", join(dir, "first"));
    const forged = {
      ...signed.checksum,
      spec: {
        ...(update.checksum as { spec: object }).spec,
        signature: (signed.checksum as { spec: { signature: unknown } }).spec.signature,
      },
    } as KubernetesObject;
    await applyOrThrow(cluster.kc, [update.ingress, forged]);
    const health = await waitUntil("the edited copy to be ignored", async () => {
      const g = await guard();
      return ignoredReason(g, "signed-first-copy") ? g : undefined;
    });
    assert.equal(ignoredReason(health, "signed-first-copy"), "BadSignature");
    assert.match(
      health?.ignored?.find(i => i.name.endsWith("/signed-first-copy"))?.message ?? "",
      /does not verify/,
    );
    await waitUntil("the update to be refused", async () => (await guard())?.state === "mismatch");
    assert.deepEqual(await get(gateway.httpPort, HOST), { status: 200, body: "blue /" });
  });

  it("trusts a key added to the ConfigMap at once, and a removed key no more", async () => {
    const bySecond = attest("signed-second", "2", "green", join(dir, "second"));
    await applyOrThrow(cluster.kc, [bySecond.checksum]);
    await waitUntil(
      "the second key's object to be ignored",
      async () => ignoredReason(await guard(), "signed-second") === "BadSignature",
    );

    // The rotation: both keys trusted, then the first one removed.
    await applyOrThrow(cluster.kc, [
      keysConfigMap({ "first.pem": join(dir, "first"), "second.pem": join(dir, "second") }),
    ]);
    assert.equal((await waitServed(gateway.httpPort, HOST, "green")).body, "green /");
    await applyOrThrow(cluster.kc, [keysConfigMap({ "second.pem": join(dir, "second") })]);
    const health = await waitUntil("the first key's objects to be ignored", async () => {
      const g = await guard();
      return ignoredReason(g, "signed-first") === "BadSignature" ? g : undefined;
    });
    assert.equal(health?.state, "matched", "the second key's object still attests");
    assert.deepEqual(await get(gateway.httpPort, HOST), { status: 200, body: "green /" });
  });
});
