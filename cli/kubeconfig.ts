// Which cluster a command talks to, checked before the first API call: without it, the client
// falls back to http://localhost:8080 and fails with "HTTP protocol is not allowed when
// skipTLSVerify is not set", which names nothing the person can fix.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { KubeConfig } from "@kubernetes/client-node";
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

/**
 * `--context NAME`: every client in this process (client-node's and Pepr's fluent one) reads
 * KUBECONFIG, and the fluent client has no context option, so the chosen kubeconfig is written,
 * with NAME as its current context, to a private temporary file that KUBECONFIG then names (removed
 * when the process exits). Returns what is wrong, or undefined.
 */
export function useContext(name: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const kc = new KubeConfig();
  try {
    kc.loadFromDefault();
  } catch (error) {
    return `--context ${name}: cannot read the kubeconfig: ${(error as Error).message}`;
  }
  const names = kc.getContexts().map(context => context.name);
  if (!names.includes(name)) {
    return `--context ${name}: no such context in the kubeconfig (it has: ${names.join(", ") || "none"})`;
  }
  kc.setCurrentContext(name);
  const dir = mkdtempSync(join(tmpdir(), "bulwark-kubeconfig-"));
  const file = join(dir, "config");
  writeFileSync(file, kc.exportConfig(), { mode: 0o600 });
  process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
  env.KUBECONFIG = file;
  return undefined;
}
