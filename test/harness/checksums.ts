// `bulwark checksum publish` as a test runs it: through the CLI's own entry point, against the
// test cluster (KUBECONFIG), returning the name of the checksum object it created.
import assert from "node:assert/strict";
import { CustomObjectsApi } from "@kubernetes/client-node";
import { main } from "../../cli/main";
import type { ProgressStream } from "../../cli/progress";
import type { TestCluster } from "./cluster";

/** Where checksum objects are trusted: the default publisher namespace. */
export const PUBLISHER = "bulwark-system";

const GROUP = { group: "tengine.taobao.org", version: "v1" };

/** Checksum objects live on in the publisher namespace: each test file removes what it made. */
export async function removePublished(cluster: TestCluster): Promise<void> {
  const custom = cluster.kc.makeApiClient(CustomObjectsApi);
  for (const plural of ["ingresschecksums", "secretchecksums"]) {
    const list = (await custom.listNamespacedCustomObject({
      ...GROUP,
      namespace: PUBLISHER,
      plural,
    })) as { items: { metadata: { name: string } }[] };
    for (const item of list.items) {
      const name = item.metadata.name;
      await custom.deleteNamespacedCustomObject({ ...GROUP, namespace: PUBLISHER, plural, name });
    }
  }
}

export async function publishChecksum(
  ns: string,
  kind: "ingress" | "secret",
  mode: "content" | "tengine" = "content",
  terminal?: ProgressStream,
): Promise<string> {
  let out = "";
  const code = await main(
    ["checksum", "publish", "--kind", kind, "--mode", mode, "-n", ns],
    s => (out += s),
    () => {},
    terminal,
  );
  assert.equal(code, 0, out);
  const name = /created \w+ [^/]+\/(\S+):/.exec(out)?.[1];
  assert.ok(name, out);
  return name;
}
