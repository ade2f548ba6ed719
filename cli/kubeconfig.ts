// Which cluster a command talks to, checked before the first API call: without it, the client
// falls back to http://localhost:8080 and fails with "HTTP protocol is not allowed when
// skipTLSVerify is not set", which names nothing the person can fix.
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { delimiter, join } from "node:path";

/**
 * Points the process at `flag` (--kubeconfig) when given; otherwise checks that KUBECONFIG, the
 * default ~/.kube/config or an in-cluster service account exists. Returns what is wrong, or
 * undefined.
 */
export function chooseKubeconfig(
  flag: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
  home: string = homedir(),
): string | undefined {
  if (flag !== undefined) {
    if (!existsSync(flag)) return `--kubeconfig ${flag}: no such file`;
    env.KUBECONFIG = flag;
    return undefined;
  }
  if (env.KUBECONFIG) {
    const files = env.KUBECONFIG.split(delimiter).filter(Boolean);
    if (files.some(file => existsSync(file))) return undefined;
    return `KUBECONFIG names no file that exists (${files.join(", ")})`;
  }
  if (existsSync(join(home, ".kube", "config")) || env.KUBERNETES_SERVICE_HOST) return undefined;
  return "no kubeconfig: set KUBECONFIG, pass --kubeconfig FILE, or create ~/.kube/config";
}
