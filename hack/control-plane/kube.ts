// The few API calls the harness makes itself: server-side apply of YAML, CRD readiness.
import {
  KubeConfig,
  KubernetesObjectApi,
  PatchStrategy,
  type KubernetesObject,
} from "@kubernetes/client-node";
import { readFileSync } from "node:fs";
import { apiMessage } from "../../kube/api-errors";
import { waitUntil } from "../../test/harness/wait";
import { dump, loadAll } from "js-yaml";

export function loadKubeConfig(path: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromFile(path);
  return kc;
}

export function readYamlObjects(path: string): KubernetesObject[] {
  return loadAll(readFileSync(path, "utf8")).filter(
    (doc): doc is KubernetesObject => typeof doc === "object" && doc !== null && "kind" in doc,
  );
}

/** One YAML document, as the files Bulwark writes spell it: no line folding, no anchors. */
export function toYaml(value: unknown): string {
  return dump(value, { lineWidth: -1, noRefs: true });
}

/** Objects as a multi-document YAML file (readYamlObjects reads it back). */
export function toYamlDocuments(objects: readonly unknown[]): string {
  return objects.map(toYaml).join("---\n");
}

export function describe(object: KubernetesObject): string {
  const ns = object.metadata?.namespace ? `${object.metadata.namespace}/` : "";
  return `${object.kind} ${ns}${object.metadata?.name ?? "<unnamed>"}`;
}

export interface ApplyFailure {
  object: string;
  message: string;
}

/** Server-side applies each object in order; collects failures instead of stopping at the first. */
export async function applyObjects(
  kc: KubeConfig,
  objects: KubernetesObject[],
  options: { dryRun?: boolean; fieldManager?: string } = {},
): Promise<ApplyFailure[]> {
  const client = KubernetesObjectApi.makeApiClient(kc);
  const failures: ApplyFailure[] = [];
  for (const object of objects) {
    try {
      await client.patch(
        object,
        undefined,
        options.dryRun ? "All" : undefined,
        options.fieldManager ?? "bulwark-harness",
        true,
        PatchStrategy.ServerSideApply,
      );
    } catch (error) {
      failures.push({ object: describe(object), message: apiMessage(error) });
    }
  }
  return failures;
}

export async function applyOrThrow(kc: KubeConfig, objects: KubernetesObject[]): Promise<void> {
  const failures = await applyObjects(kc, objects);
  if (failures.length > 0) {
    throw new Error(`apply failed: ${failures.map(f => `${f.object}: ${f.message}`).join("; ")}`);
  }
}

export async function waitForCrdsEstablished(kc: KubeConfig, names: string[]): Promise<void> {
  const client = KubernetesObjectApi.makeApiClient(kc);
  for (const name of names) {
    await waitUntil(`CRD ${name} to be Established`, async () => {
      const crd = (await client.read({
        apiVersion: "apiextensions.k8s.io/v1",
        kind: "CustomResourceDefinition",
        metadata: { name },
      })) as KubernetesObject & { status?: { conditions?: { type: string; status: string }[] } };
      return crd.status?.conditions?.some(c => c.type === "Established" && c.status === "True");
    });
  }
}
