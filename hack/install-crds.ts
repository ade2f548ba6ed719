import { crdFiles } from "../packaging/build";
import {
  applyOrThrow,
  loadKubeConfig,
  readYamlObjects,
  waitForCrdsEstablished,
} from "./control-plane/kube";

/** Applies crds/ and waits until every CRD is Established; returns their names. */
export async function installCrds(kubeconfigPath: string): Promise<string[]> {
  const crds = crdFiles().flatMap(readYamlObjects);
  if (crds.length === 0) return [];
  const kc = loadKubeConfig(kubeconfigPath);
  await applyOrThrow(kc, crds);
  const names = crds.map(c => c.metadata?.name ?? "");
  await waitForCrdsEstablished(kc, names);
  return names;
}
