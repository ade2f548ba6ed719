import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { V1Container, V1Pod, V1Volume } from "@kubernetes/client-node";
import { bulwarkInitContainer, tokenVolume, type InjectConfig } from "./inject";
import { podDisplayName, type PermissionPod } from "./pod";

const config: InjectConfig = {
  image: "ghcr.io/bulwark/init:1",
  serverUrl: "https://permission-server.bulwark-system.svc:8443",
  audience: "bulwark-permission-server",
  tokenExpirationSeconds: 600,
  ownNamespace: "bulwark-system",
};

describe("structural pod types", () => {
  it("given a client-node V1Pod, returns it usable as a PermissionPod (checked by tsc)", () => {
    const pod: V1Pod = {
      metadata: { name: "a", deletionTimestamp: new Date(0) },
      spec: { containers: [{ name: "app" }] },
    };
    const view: PermissionPod = pod;
    assert.equal(view.metadata?.name, "a");
  });

  it("given Bulwark's init container and volume, returns them usable as V1Container and V1Volume (checked by tsc)", () => {
    const container: V1Container = bulwarkInitContainer("g", "bulwark-token", config);
    const volume: V1Volume = tokenVolume("bulwark-token", config);
    assert.equal(container.name, "bulwark-init");
    assert.equal(volume.name, "bulwark-token");
  });
});

describe("podDisplayName", () => {
  const cases: [string, PermissionPod, string][] = [
    ["a named pod", { metadata: { name: "web-0" } }, "web-0"],
    [
      "a ReplicaSet's pod at admission",
      { metadata: { generateName: "web-7d4b9-" } },
      "web-7d4b9-*****",
    ],
    ["no metadata", {}, "(unnamed)"],
  ];
  for (const [title, pod, expected] of cases) {
    it(`given ${title}, returns ${expected}`, () => {
      assert.equal(podDisplayName(pod), expected);
    });
  }
});
