// `bulwark checksum publish` as a test runs it: through the CLI's own entry point, against the
// test cluster (KUBECONFIG), returning the name of the checksum object it created.
import assert from "node:assert/strict";
import { main } from "../../cli/main";

export async function publishChecksum(
  ns: string,
  kind: "ingress" | "secret",
  mode: "content" | "tengine" = "content",
): Promise<string> {
  let out = "";
  const code = await main(
    ["checksum", "publish", "--kind", kind, "--mode", mode, "-n", ns],
    s => (out += s),
    () => {},
  );
  assert.equal(code, 0, out);
  const name = /created \w+ [^/]+\/(\S+):/.exec(out)?.[1];
  assert.ok(name, out);
  return name;
}
