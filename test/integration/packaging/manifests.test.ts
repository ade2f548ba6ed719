// `npm run build -- --image REGISTRY/bulwark:TAG` output: the image everywhere Bulwark runs, the
// Pepr controller image as Pepr sets it and told the init image, and all of it accepted by the
// real API server (server-side dry run). Written to a folder of its own from the module test/run.ts
// built, so the shared manifests/ stays as the run made it.
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import type { KubernetesObject, V1PodSpec } from "@kubernetes/client-node";
import { writeManifests } from "../../../packaging/build";
import { applyObjects, readYamlObjects } from "../../../hack/control-plane/kube";
import { defaultValues } from "../../../packaging/manifests";
import { testCluster } from "../../harness/cluster";

const cluster = testCluster();
const IMAGE = "registry.example.com/platform/bulwark:7.7.7";

function podSpec(object: KubernetesObject): V1PodSpec | undefined {
  return (object as { spec?: { template?: { spec?: V1PodSpec } } }).spec?.template?.spec;
}

describe("npm run build -- --image", () => {
  const dir = mkdtempSync(join(tmpdir(), "bulwark-manifests-"));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const files = writeManifests(defaultValues(IMAGE), dir);
  const objects = files.flatMap(f => readYamlObjects(f));

  it("writes the CRDs, the module, then the workloads, numbered in apply order", () => {
    assert.deepEqual(
      files.map(f => basename(f)),
      ["00-crds.yaml", "10-pepr-module.yaml", "20-bulwark.yaml"],
    );
  });

  it("puts the image in every Bulwark container, and leaves Pepr's controllers on Pepr's image", () => {
    const workloads = objects.filter(o =>
      ["Deployment", "StatefulSet", "DaemonSet"].includes(o.kind ?? ""),
    );
    const images = new Map<string, string[]>();
    for (const workload of workloads) {
      const containers = podSpec(workload)?.containers ?? [];
      images.set(
        workload.metadata?.name ?? "",
        containers.map(c => c.image ?? ""),
      );
    }
    assert.deepEqual(images.get("bulwark-gateway"), [IMAGE]);
    assert.deepEqual(images.get("bulwark-permission-server"), [IMAGE]);
    assert.deepEqual(images.get("bulwark-edge-health"), [IMAGE]);
    const pepr = workloads.filter(w => w.metadata?.namespace === "pepr-system");
    assert.equal(pepr.length, 2, "admission and watcher");
    for (const controller of pepr) {
      const [container] = podSpec(controller)?.containers ?? [];
      assert.match(container?.image ?? "", /^ghcr\.io\/defenseunicorns\/pepr\/controller:v1\.1\./);
      const env = new Map(container?.env?.map(e => [e.name, e.value]));
      assert.equal(env.get("BULWARK_INIT_IMAGE"), IMAGE, controller.metadata?.name);
      assert.equal(
        env.get("BULWARK_PERMISSION_SERVER"),
        "https://bulwark-permission-server.bulwark-system.svc:8443",
      );
      assert.equal(
        env.get("BULWARK_PERMISSION_CA_SECRET"),
        "bulwark-system/bulwark-permission-server-tls",
      );
      assert.equal(env.get("BULWARK_NAMESPACE"), "bulwark-system");
    }
  });

  it("is accepted object by object by a server-side dry-run apply", async () => {
    // Namespaces for real: a dry-run namespace does not exist for the objects that go in it.
    assert.deepEqual(
      await applyObjects(
        cluster.kc,
        objects.filter(o => o.kind === "Namespace"),
      ),
      [],
    );
    const failures = await applyObjects(
      cluster.kc,
      objects.filter(o => o.kind !== "Namespace"),
      { dryRun: true },
    );
    assert.deepEqual(failures, []);
  });
});
