import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { applyWebhookPolicy } from "./webhook-policy";

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

describe("applyWebhookPolicy", () => {
  it("gives pods, Secrets, Ingresses and the fail-open kinds a webhook each, the rest as Pepr wrote it", () => {
    const withAll = {
      ...config,
      webhooks: [
        {
          ...config.webhooks[0]!,
          rules: [
            ...config.webhooks[0]!.rules,
            {
              apiGroups: [""],
              apiVersions: ["v1"],
              operations: ["CREATE"],
              resources: ["secrets"],
            },
            {
              apiGroups: ["networking.k8s.io"],
              apiVersions: ["v1"],
              operations: ["CREATE", "UPDATE"],
              resources: ["ingresses"],
            },
            {
              apiGroups: ["bulwark.dev"],
              apiVersions: ["v1alpha1"],
              operations: ["CREATE"],
              resources: ["permissiongroups"],
            },
          ],
        },
      ],
    };
    const split = applyWebhookPolicy(withAll);
    assert.deepEqual(
      split.webhooks.map(w => [
        w.name,
        w.failurePolicy,
        w.rules.map(r => r.resources[0]),
        (w as { matchConditions?: { name: string }[] }).matchConditions?.map(c => c.name),
      ]),
      [
        ["pepr-bulwark-pods.pepr.dev", "Fail", ["pods"], ["names-a-permission-group"]],
        ["pepr-bulwark-fail-open.pepr.dev", "Ignore", ["nodes", "endpointslices"], undefined],
        ["pepr-bulwark-tls-secrets.pepr.dev", "Ignore", ["secrets"], ["is-a-tls-secret"]],
        ["pepr-bulwark-ingresses.pepr.dev", "Fail", ["ingresses"], ["may-be-served-by-bulwark"]],
        ["pepr-bulwark.pepr.dev", "Fail", ["permissiongroups"], undefined],
      ],
    );
  });

  it("given only rules without a policy, returns the webhook as it was", () => {
    const crdsOnly = {
      ...config,
      webhooks: [
        {
          ...config.webhooks[0]!,
          rules: [
            {
              apiGroups: ["bulwark.dev"],
              apiVersions: ["v1alpha1"],
              operations: ["CREATE"],
              resources: ["permissiongroups"],
            },
          ],
        },
      ],
    };
    assert.deepEqual(applyWebhookPolicy(crdsOnly), crdsOnly);
  });

  it("leaves Bulwark's own namespace out of the pods and TLS Secrets webhooks, keeping Pepr's exclusions", () => {
    const withSelector = {
      ...config,
      webhooks: [
        {
          ...config.webhooks[0]!,
          namespaceSelector: {
            matchExpressions: [
              {
                key: "kubernetes.io/metadata.name",
                operator: "NotIn",
                values: ["kube-system", "pepr-system"],
              },
            ],
          },
          rules: [
            ...config.webhooks[0]!.rules,
            {
              apiGroups: [""],
              apiVersions: ["v1"],
              operations: ["CREATE"],
              resources: ["secrets"],
            },
            {
              apiGroups: ["networking.k8s.io"],
              apiVersions: ["v1"],
              operations: ["CREATE"],
              resources: ["ingresses"],
            },
          ],
        },
      ],
    };
    const split = applyWebhookPolicy(withSelector, {
      ownNamespace: "edge-ops",
      classlessIngresses: true,
    });
    const excluded = (name: string) =>
      (
        split.webhooks.find(w => w.name === name) as {
          namespaceSelector?: { matchExpressions?: { values?: string[] }[] };
        }
      ).namespaceSelector?.matchExpressions?.[0]?.values;
    assert.deepEqual(excluded("pepr-bulwark-pods.pepr.dev"), [
      "kube-system",
      "pepr-system",
      "edge-ops",
    ]);
    assert.deepEqual(excluded("pepr-bulwark-tls-secrets.pepr.dev"), [
      "kube-system",
      "pepr-system",
      "edge-ops",
    ]);
    // Ingresses in Bulwark's namespace are still Bulwark's to guard.
    assert.deepEqual(excluded("pepr-bulwark-ingresses.pepr.dev"), ["kube-system", "pepr-system"]);
  });

  it("given a webhook without a namespaceSelector, adds one that leaves Bulwark's namespace out", () => {
    const split = applyWebhookPolicy(config);
    const pods = split.webhooks.find(w => w.name === "pepr-bulwark-pods.pepr.dev") as {
      namespaceSelector?: unknown;
    };
    assert.deepEqual(pods.namespaceSelector, {
      matchExpressions: [
        { key: "kubernetes.io/metadata.name", operator: "NotIn", values: ["bulwark-system"] },
      ],
    });
  });

  it("lets class-less Ingresses reach the webhook only while Bulwark's class may be the default", () => {
    const ingresses = {
      ...config,
      webhooks: [
        {
          ...config.webhooks[0]!,
          rules: [
            {
              apiGroups: ["networking.k8s.io"],
              apiVersions: ["v1"],
              operations: ["CREATE"],
              resources: ["ingresses"],
            },
          ],
        },
      ],
    };
    const condition = (classless: boolean) =>
      (
        applyWebhookPolicy(ingresses, {
          ownNamespace: "bulwark-system",
          classlessIngresses: classless,
        }).webhooks[0] as unknown as { matchConditions: { expression: string }[] }
      ).matchConditions[0]!.expression;
    assert.match(condition(true), /!\(has\(object\.metadata\.annotations\)/);
    assert.doesNotMatch(condition(false), /!\(has\(object\.metadata\.annotations\)/);
    assert.match(condition(false), /has\(object\.spec\.ingressClassName\)/);
  });

  it("given another kind of object, returns it as it is", () => {
    const namespace = { apiVersion: "v1", kind: "Namespace", metadata: { name: "x" } };
    assert.equal(applyWebhookPolicy(namespace), namespace);
  });
});
