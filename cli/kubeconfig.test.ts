import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chooseKubeconfig } from "./kubeconfig";

describe("chooseKubeconfig", () => {
  const dir = mkdtempSync(join(tmpdir(), "bulwark-kubeconfig-"));
  const file = join(dir, "config");
  writeFileSync(file, "apiVersion: v1\nkind: Config\n");
  const emptyHome = join(dir, "home-empty");
  const home = join(dir, "home");
  mkdirSync(join(home, ".kube"), { recursive: true });
  writeFileSync(join(home, ".kube", "config"), "");

  it("given --kubeconfig FILE, points KUBECONFIG at it", () => {
    const env: NodeJS.ProcessEnv = {};
    assert.equal(chooseKubeconfig(file, env, emptyHome), undefined);
    assert.equal(env.KUBECONFIG, file);
  });
  it("given --kubeconfig naming no file, says so", () => {
    assert.equal(chooseKubeconfig("/no/such", {}, home), "--kubeconfig /no/such: no such file");
  });
  it("given KUBECONFIG with one existing file of two, accepts it", () => {
    assert.equal(
      chooseKubeconfig(undefined, { KUBECONFIG: `/no/such:${file}` }, emptyHome),
      undefined,
    );
  });
  it("given KUBECONFIG naming no existing file, says which", () => {
    assert.match(
      chooseKubeconfig(undefined, { KUBECONFIG: "/a:/b" }, home) ?? "",
      /names no file that exists \(\/a, \/b\)/,
    );
  });
  it("given ~/.kube/config or a pod's service account, accepts them", () => {
    assert.equal(chooseKubeconfig(undefined, {}, home), undefined);
    assert.equal(
      chooseKubeconfig(undefined, { KUBERNETES_SERVICE_HOST: "10.0.0.1" }, emptyHome),
      undefined,
    );
  });
  it("given nothing, names the three ways to give one", () => {
    assert.equal(
      chooseKubeconfig(undefined, {}, emptyHome),
      "no kubeconfig: set KUBECONFIG, pass --kubeconfig FILE, or create ~/.kube/config",
    );
  });
});
