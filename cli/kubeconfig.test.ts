import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chooseKubeconfig, useContext } from "./kubeconfig";

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

describe("useContext (--context)", () => {
  const dir = mkdtempSync(join(tmpdir(), "bulwark-context-"));
  const file = join(dir, "config");
  const cluster = (name: string, port: number) =>
    `- name: ${name}\n  cluster:\n    server: https://127.0.0.1:${port}\n    insecure-skip-tls-verify: true\n`;
  writeFileSync(
    file,
    `apiVersion: v1\nkind: Config\nclusters:\n${cluster("prod", 6443)}${cluster("staging", 7443)}` +
      "users:\n- name: u\n  user:\n    token: t\n" +
      "contexts:\n- name: prod\n  context: {cluster: prod, user: u}\n- name: staging\n  context: {cluster: staging, user: u}\n" +
      "current-context: prod\n",
  );

  function withKubeconfig<T>(run: () => T): T {
    const before = process.env.KUBECONFIG;
    process.env.KUBECONFIG = file;
    try {
      return run();
    } finally {
      process.env.KUBECONFIG = before;
      if (before === undefined) delete process.env.KUBECONFIG;
    }
  }

  it("given a context of the kubeconfig, points KUBECONFIG at a private copy whose current context it is", () => {
    const chosen = withKubeconfig(() => {
      assert.equal(useContext("staging"), undefined);
      return process.env.KUBECONFIG ?? "";
    });
    assert.notEqual(chosen, file);
    assert.equal(statSync(chosen).mode & 0o777, 0o600);
    const copy = JSON.parse(readFileSync(chosen, "utf8")) as {
      "current-context": string;
      clusters: { name: string; cluster: { server: string } }[];
    };
    assert.equal(copy["current-context"], "staging");
    assert.deepEqual(
      copy.clusters.map(c => c.cluster.server),
      ["https://127.0.0.1:6443", "https://127.0.0.1:7443"],
    );
    assert.match(
      readFileSync(file, "utf8"),
      /current-context: prod/,
      "the user's file is untouched",
    );
  });
  it("given a context the kubeconfig lacks, names it and the ones there are, and changes nothing", () => {
    const message = withKubeconfig(() => {
      const problem = useContext("dev");
      assert.equal(process.env.KUBECONFIG, file);
      return problem;
    });
    assert.equal(
      message,
      "--context dev: no such context in the kubeconfig (it has: prod, staging)",
    );
    assert.ok(existsSync(file));
  });
});
