// What an integration test gets: the shared control plane that test/run.ts started, a client,
// and a namespace of its own so tests never see each other's objects.
import { CoreV1Api, KubernetesObjectApi, type KubeConfig } from "@kubernetes/client-node";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { loadKubeConfig } from "../../hack/control-plane/kube";

export const CLUSTER_ENV = "BULWARK_TEST_CLUSTER";

export interface TestClusterInfo {
  kubeconfigPath: string;
  server: string;
  dir: string;
  binDir: string;
  peprUrl: string;
  webhookNames: string[];
  /** The Pepr module's own Prometheus endpoint (Bulwark's metrics). */
  metricsUrl: string;
}

export interface TestCluster extends TestClusterInfo {
  kc: KubeConfig;
  core: CoreV1Api;
  objects: KubernetesObjectApi;
}

export function testCluster(): TestCluster {
  const infoPath = process.env[CLUSTER_ENV];
  if (!infoPath) {
    throw new Error(
      `${CLUSTER_ENV} is not set: run integration tests through \`npm test\` (test/run.ts)`,
    );
  }
  const info = JSON.parse(readFileSync(infoPath, "utf8")) as TestClusterInfo;
  const kc = loadKubeConfig(info.kubeconfigPath);
  return {
    ...info,
    kc,
    core: kc.makeApiClient(CoreV1Api),
    objects: KubernetesObjectApi.makeApiClient(kc),
  };
}

/** Creates `<prefix>-<random>`; the returned function deletes it (the namespace controller empties it). */
export async function testNamespace(
  cluster: TestCluster,
  prefix: string,
): Promise<[string, () => Promise<void>]> {
  const name = `${prefix}-${randomBytes(3).toString("hex")}`;
  await cluster.core.createNamespace({
    body: { metadata: { name, labels: { "bulwark.dev/test": "true" } } },
  });
  return [name, async () => void (await cluster.core.deleteNamespace({ name }))];
}
