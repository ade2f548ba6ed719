// Everything `npm run build` writes into manifests/ is accepted by the real API server.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { MANIFESTS } from "../../packaging/build";
import { applyObjects, readYamlObjects } from "../../hack/control-plane/kube";
import { testCluster } from "../harness/cluster";

const cluster = testCluster();

describe("manifests/", () => {
  const files = readdirSync(MANIFESTS)
    .filter(f => f.endsWith(".yaml"))
    .sort();
  const objects = files.flatMap(f => readYamlObjects(join(MANIFESTS, f)));

  it("holds the Pepr module with its webhooks, Deployments and scoped RBAC", () => {
    const kinds = new Set(objects.map(o => o.kind));
    // A ValidatingWebhookConfiguration appears once a capability has a Validate binding.
    for (const kind of ["Namespace", "ClusterRole", "Deployment", "MutatingWebhookConfiguration"]) {
      assert.ok(kinds.has(kind), `manifests/ has a ${kind}`);
    }
    const roles = objects.filter(o => o.kind === "ClusterRole") as {
      rules?: { verbs: string[]; resources?: string[] }[];
    }[];
    const wildcard = roles
      .flatMap(r => r.rules ?? [])
      .filter(r => r.verbs.includes("*") || r.resources?.includes("*"));
    assert.deepEqual(wildcard, [], "no cluster-admin style rule");
  });

  it("is accepted object by object by a server-side dry-run apply", async () => {
    // Namespaces are created for real first: a dry-run namespace does not exist for its objects.
    const namespaces = objects.filter(o => o.kind === "Namespace");
    assert.deepEqual(await applyObjects(cluster.kc, namespaces), []);
    const failures = await applyObjects(
      cluster.kc,
      objects.filter(o => o.kind !== "Namespace"),
      { dryRun: true },
    );
    assert.deepEqual(failures, []);
  });
});
