import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { KubeConfig } from "@kubernetes/client-node";
import { CREDENTIALS_TTL_MS, KubeCredentials } from "./credentials";

function kubeconfig(token: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: "c", server: "https://127.0.0.1:6443", skipTLSVerify: true }],
    users: [{ name: "u", token }],
    contexts: [{ name: "x", cluster: "c", user: "u" }],
    currentContext: "x",
  });
  return kc;
}

const bearer = async (credentials: KubeCredentials): Promise<unknown> =>
  ((await credentials.options()).headers as Record<string, string>).Authorization;

describe("KubeCredentials", () => {
  it("applies the kubeconfig again once its copy is a minute old (a rotated token is sent)", async () => {
    const kc = kubeconfig("first");
    let now = 1_000_000;
    const credentials = new KubeCredentials(kc, () => now);
    assert.equal(await bearer(credentials), "Bearer first");
    // The kubelet rewrote the token file; client-node's user now reads the new token.
    (kc.getCurrentUser() as { token?: string }).token = "second";
    now += CREDENTIALS_TTL_MS - 1;
    assert.equal(await bearer(credentials), "Bearer first", "within the minute: the same copy");
    now += 1;
    assert.equal(await bearer(credentials), "Bearer second");
    assert.equal((await credentials.options()).agent, undefined, "no agent of its own");
  });

  it("a failed application is tried again on the next request, not remembered", async () => {
    const kc = kubeconfig("t");
    const apply = kc.applyToHTTPSOptions.bind(kc);
    let fail = true;
    kc.applyToHTTPSOptions = async options => {
      if (fail) throw new Error("exec plugin failed");
      return apply(options);
    };
    const credentials = new KubeCredentials(kc);
    await assert.rejects(credentials.options(), /exec plugin failed/);
    fail = false;
    assert.equal(await bearer(credentials), "Bearer t");
  });
});
