import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { splitFailOpenRules } from "./webhook-policy";

const config = {
  apiVersion: "admissionregistration.k8s.io/v1",
  kind: "MutatingWebhookConfiguration",
  metadata: { name: "pepr-bulwark" },
  webhooks: [
    {
      name: "pepr-bulwark.pepr.dev",
      failurePolicy: "Fail",
      rules: [
        { apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["pods"] },
        { apiGroups: [""], apiVersions: ["v1"], operations: ["UPDATE"], resources: ["nodes"] },
        {
          apiGroups: ["discovery.k8s.io"],
          apiVersions: ["v1"],
          operations: ["CREATE", "UPDATE"],
          resources: ["endpointslices"],
        },
      ],
    },
  ],
};

describe("splitFailOpenRules", () => {
  it("given pod, node and EndpointSlice rules, keeps pods failing closed and moves the others to a fail-open webhook", () => {
    const split = splitFailOpenRules(config);
    assert.deepEqual(
      split.webhooks.map(w => [w.name, w.failurePolicy, w.rules.map(r => r.resources[0])]),
      [
        ["pepr-bulwark.pepr.dev", "Fail", ["pods"]],
        ["pepr-bulwark-fail-open.pepr.dev", "Ignore", ["nodes", "endpointslices"]],
      ],
    );
  });

  it("given a configuration with only fail-closed rules, returns it unchanged", () => {
    const podsOnly = {
      ...config,
      webhooks: [{ ...config.webhooks[0]!, rules: [config.webhooks[0]!.rules[0]!] }],
    };
    assert.deepEqual(splitFailOpenRules(podsOnly), podsOnly);
  });

  it("given another kind of object, returns it as it is", () => {
    const namespace = { apiVersion: "v1", kind: "Namespace", metadata: { name: "x" } };
    assert.equal(splitFailOpenRules(namespace), namespace);
  });
});
