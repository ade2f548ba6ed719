// A chart that composes (issue #23): release-prefixed names, the release's instance label on every
// object, scheduling and extra metadata per workload, pull secrets, the gateway Service's knobs,
// and one values validator for `npm run build --values` and Helm. The chart renders the same
// (test/integration/packaging/helm.test.ts compares them object by object).
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type {
  KubernetesObject,
  V1DaemonSet,
  V1Deployment,
  V1Service,
  V1StatefulSet,
} from "@kubernetes/client-node";
import {
  defaultValues,
  fullname,
  moduleEnv,
  parseValues,
  valuesFrom,
  workloadManifests,
  type BulwarkValues,
} from "./manifests";
import { INSTANCE_LABEL, PART_OF_LABEL } from "./manifests/common";
import { find, onlyContainer, podSpec, podTemplateLabels, selects } from "./testkit";

const IMAGE = "registry.example.com/team/bulwark:1.2.3";

function manifests(
  change: (v: BulwarkValues) => void = () => {},
  install: { release?: string; namespace?: string } = {},
): KubernetesObject[] {
  const values = defaultValues(IMAGE, install);
  change(values);
  return workloadManifests(values);
}

const key = (o: KubernetesObject) =>
  `${o.kind} ${o.metadata?.namespace ?? ""}/${o.metadata?.name ?? ""}`;

/** Every selector in the objects: workloads', Services', PDBs', and those inside pod templates. */
function selectors(objects: KubernetesObject[]): [string, Record<string, string>][] {
  const found: [string, Record<string, string>][] = [];
  const walk = (node: unknown, where: string): void => {
    if (typeof node !== "object" || node === null) return;
    for (const [k, child] of Object.entries(node)) {
      if (k === "matchLabels" || (k === "selector" && where.startsWith("Service"))) {
        if (child && typeof child === "object" && !("matchLabels" in child)) {
          found.push([where, child as Record<string, string>]);
        }
      }
      walk(child, where);
    }
  };
  for (const object of objects) walk(object, key(object));
  return found;
}

const WORKLOADS = [
  ["StatefulSet", "gateway"],
  ["Deployment", "permission-server"],
  ["DaemonSet", "edge-health"],
] as const;

describe("names", () => {
  it("fullname: the release name when it says bulwark, else <release>-bulwark, or the override", () => {
    assert.equal(fullname({ release: "bulwark", fullnameOverride: "" }), "bulwark");
    assert.equal(fullname({ release: "bulwark-edge", fullnameOverride: "" }), "bulwark-edge");
    assert.equal(fullname({ release: "edge", fullnameOverride: "" }), "edge-bulwark");
    assert.equal(fullname({ release: "edge", fullnameOverride: "bulwark" }), "bulwark");
  });

  it("release bulwark keeps every name, selector and claim label of the chart before prefixes", () => {
    const objects = manifests();
    // What the previous chart made: an upgrade must change none of the immutable parts.
    const sts = find<V1StatefulSet>(objects, "StatefulSet", "bulwark-gateway");
    assert.deepEqual(sts.spec?.selector.matchLabels, {
      "app.kubernetes.io/name": "bulwark-gateway",
      "app.kubernetes.io/part-of": "bulwark",
    });
    assert.equal(sts.spec?.serviceName, "bulwark-gateway-headless");
    assert.deepEqual(sts.spec?.volumeClaimTemplates?.[0]?.metadata, {
      name: "state",
      labels: {
        "app.kubernetes.io/name": "bulwark-gateway",
        "app.kubernetes.io/part-of": "bulwark",
        "app.kubernetes.io/component": "gateway",
      },
    });
    const deployment = find<V1Deployment>(objects, "Deployment", "bulwark-permission-server");
    assert.deepEqual(deployment.spec?.selector.matchLabels, {
      "app.kubernetes.io/name": "bulwark-permission-server",
      "app.kubernetes.io/part-of": "bulwark",
    });
    const daemonSet = find<V1DaemonSet>(objects, "DaemonSet", "bulwark-edge-health");
    assert.deepEqual(daemonSet.spec?.selector.matchLabels, {
      "app.kubernetes.io/name": "bulwark-edge-health",
      "app.kubernetes.io/part-of": "bulwark",
    });
    const named = objects
      .filter(o => o.kind !== "Namespace")
      .map(o => o.metadata?.name ?? "")
      .filter(name => name !== "bulwark");
    assert.ok(
      named.every(n => n.startsWith("bulwark-")),
      named.join(", "),
    );
    for (const name of ["bulwark-checksum-publishers", "bulwark-pod-permission-metadata"]) {
      find(objects, "ValidatingAdmissionPolicy", name);
      find(objects, "ValidatingAdmissionPolicyBinding", name);
    }
    find(objects, "ClusterRole", "bulwark-checksum-publisher");
  });

  it("two releases in one namespace share no object (the second leaves the IngressClass to the first)", () => {
    const first = manifests();
    const second = manifests(v => void (v.gateway.ingressClass.create = false), {
      release: "edge",
    });
    const names = new Set(first.filter(o => o.kind !== "Namespace").map(key));
    const shared = second.filter(o => o.kind !== "Namespace" && names.has(key(o))).map(key);
    assert.deepEqual(shared, []);
    for (const kind of ["ClusterRole", "ClusterRoleBinding", "ValidatingAdmissionPolicy"]) {
      assert.ok(second.some(o => o.kind === kind && o.metadata?.name?.startsWith("edge-bulwark-")));
    }
    // No selector of one release picks the other's pods.
    for (const [release, mine, theirs] of [
      ["bulwark", first, second],
      ["edge", second, first],
    ] as const) {
      for (const [where, selector] of selectors(mine)) {
        for (const [kind, component] of WORKLOADS) {
          const workload = theirs.find(
            o => o.kind === kind && o.metadata?.name?.endsWith(component),
          );
          assert.ok(workload);
          assert.ok(!selects(selector, podTemplateLabels(workload)), `${release}: ${where}`);
        }
      }
    }
  });

  it("bindings, the permission server's URL and its trust follow the release's names", () => {
    const values = defaultValues(IMAGE, { release: "edge", namespace: "edge-system" });
    const objects = workloadManifests(values);
    for (const binding of objects.filter(o => o.kind?.endsWith("RoleBinding")) as {
      metadata: { name: string };
      roleRef: { name: string };
      subjects: { name: string; namespace: string }[];
    }[]) {
      assert.match(binding.metadata.name, /^edge-bulwark-/);
      assert.equal(binding.roleRef.name, binding.metadata.name);
      assert.deepEqual(
        binding.subjects.map(s => `${s.namespace}/${s.name}`),
        [`edge-system/${binding.metadata.name}`],
      );
    }
    const sts = find<V1StatefulSet>(objects, "StatefulSet", "edge-bulwark-gateway");
    assert.equal(podSpec(sts).serviceAccountName, "edge-bulwark-gateway");
    assert.equal(sts.spec?.serviceName, "edge-bulwark-gateway-headless");
    find(objects, "Service", "edge-bulwark-gateway-headless");
    const env = new Map(moduleEnv(values).map(e => [e.name, e.value]));
    assert.equal(
      env.get("BULWARK_PERMISSION_SERVER"),
      "https://edge-bulwark-permission-server.edge-system.svc:8443",
    );
    find(objects, "Service", "edge-bulwark-permission-server");
    const policy = find<{ spec: { matchConditions: { expression: string }[] } }>(
      objects,
      "ValidatingAdmissionPolicy",
      "edge-bulwark-pod-permission-metadata",
    );
    assert.match(
      policy.spec.matchConditions[0]?.expression ?? "",
      /'system:serviceaccount:edge-system:edge-bulwark-permission-server'/,
    );
    const binding = find<{ spec: { policyName: string } }>(
      objects,
      "ValidatingAdmissionPolicyBinding",
      "edge-bulwark-checksum-publishers",
    );
    assert.equal(binding.spec.policyName, "edge-bulwark-checksum-publishers");
  });

  it("the Secrets the install waits for are the release's: <prefix>-..., unless the values name them", () => {
    const secretsOf = (values: BulwarkValues) => {
      const objects = workloadManifests(values);
      const volume = (kind: string, name: string, volumeName: string) =>
        podSpec(find<V1Deployment>(objects, kind, name)).volumes?.find(v => v.name === volumeName)
          ?.secret?.secretName;
      const prefix = fullname(values);
      return {
        serving: volume("Deployment", `${prefix}-permission-server`, "tls"),
        moduleCa: moduleEnv(values).find(e => e.name === "BULWARK_PERMISSION_CA_SECRET")?.value,
        hmac: volume("DaemonSet", `${prefix}-edge-health`, "hmac"),
      };
    };
    assert.deepEqual(secretsOf(defaultValues(IMAGE)), {
      serving: "bulwark-permission-server-tls",
      moduleCa: "bulwark-system/bulwark-permission-server-tls",
      hmac: "bulwark-edge-health-hmac",
    });
    assert.deepEqual(secretsOf(defaultValues(IMAGE, { release: "edge", namespace: "edge-ns" })), {
      serving: "edge-bulwark-permission-server-tls",
      moduleCa: "edge-ns/edge-bulwark-permission-server-tls",
      hmac: "edge-bulwark-edge-health-hmac",
    });
    const named = defaultValues(IMAGE, { release: "edge" });
    named.permissionServer.tls.secretName = "from-cert-manager";
    named.edgeHealth.hmacSecret.name = "site-hmac";
    assert.deepEqual(secretsOf(named), {
      serving: "from-cert-manager",
      moduleCa: "bulwark-system/from-cert-manager",
      hmac: "site-hmac",
    });
  });

  it("a name prefix longer than 40 characters is refused, naming fullnameOverride", () => {
    const long = "a".repeat(34);
    const parsed = parseValues(defaultValues(IMAGE, { release: long }));
    assert.equal(parsed.ok, false);
    assert.deepEqual(parsed.ok ? [] : parsed.errors.map(e => e.field), ["fullnameOverride"]);
    const values = defaultValues(IMAGE, { release: long });
    values.fullnameOverride = "short";
    assert.ok(parseValues(values).ok);
    assert.equal(
      find<KubernetesObject>(workloadManifests(values), "Deployment", "short-permission-server")
        .kind,
      "Deployment",
    );
  });
});

describe("labels", () => {
  it("app.kubernetes.io/instance (the release) and part-of on every object and pod template", () => {
    const objects = manifests(() => {}, { release: "edge" });
    for (const object of objects) {
      assert.equal(object.metadata?.labels?.[INSTANCE_LABEL], "edge", key(object));
      assert.equal(object.metadata?.labels?.[PART_OF_LABEL], "bulwark", key(object));
    }
    for (const [kind, component] of WORKLOADS) {
      const workload = find<KubernetesObject>(objects, kind, `edge-bulwark-${component}`);
      assert.equal(podTemplateLabels(workload)[INSTANCE_LABEL], "edge");
    }
    const clusterScoped = new Set([
      "Namespace",
      "ClusterRole",
      "ClusterRoleBinding",
      "IngressClass",
      "ValidatingAdmissionPolicy",
      "ValidatingAdmissionPolicyBinding",
      "PermissionProvider",
    ]);
    for (const object of objects) {
      assert.equal(
        object.metadata?.namespace === undefined,
        clusterScoped.has(object.kind ?? ""),
        key(object),
      );
    }
  });

  it("commonLabels, a workload's labels and podLabels are added; the install's own labels win", () => {
    const objects = manifests(v => {
      v.commonLabels = { team: "platform", [INSTANCE_LABEL]: "other", tier: "common" };
      v.gateway.labels = { tier: "workload", "app.kubernetes.io/name": "other" };
      v.gateway.annotations = { "reloader.example.com/auto": "true" };
      v.gateway.podLabels = { tier: "pod", [PART_OF_LABEL]: "other" };
      v.gateway.podAnnotations = { "prometheus.io/port": "1", "sidecar.example.com/inject": "no" };
    });
    for (const object of objects) {
      assert.equal(object.metadata?.labels?.team, "platform", key(object));
      assert.equal(object.metadata?.labels?.[INSTANCE_LABEL], "bulwark", key(object));
    }
    const sts = find<V1StatefulSet>(objects, "StatefulSet", "bulwark-gateway");
    assert.equal(sts.metadata?.labels?.tier, "workload");
    assert.equal(sts.metadata?.labels?.["app.kubernetes.io/name"], "bulwark-gateway");
    assert.deepEqual(sts.metadata?.annotations, { "reloader.example.com/auto": "true" });
    const pod = sts.spec?.template.metadata;
    assert.equal(pod?.labels?.tier, "pod");
    assert.equal(pod?.labels?.team, "platform");
    assert.equal(pod?.labels?.[PART_OF_LABEL], "bulwark");
    assert.equal(pod?.annotations?.["prometheus.io/port"], "9090", "the scrape annotations win");
    assert.equal(pod?.annotations?.["sidecar.example.com/inject"], "no");
    assert.equal(
      find<V1Service>(objects, "Service", "bulwark-gateway").metadata?.labels?.tier,
      "common",
    );
    // Immutable on upgrade: the claim template and the selector never take the values' labels.
    assert.deepEqual(
      Object.keys(sts.spec?.volumeClaimTemplates?.[0]?.metadata?.labels ?? {}).sort(),
      ["app.kubernetes.io/component", "app.kubernetes.io/name", "app.kubernetes.io/part-of"],
    );
    assert.deepEqual(Object.keys(sts.spec?.selector.matchLabels ?? {}).sort(), [
      "app.kubernetes.io/name",
      "app.kubernetes.io/part-of",
    ]);
  });
});

describe("scheduling and pull secrets", () => {
  it("defaults: the gateway's anti-affinity, the permission server's spread, edge nodes for the daemons", () => {
    const objects = manifests();
    const gateway = podSpec(find(objects, "StatefulSet", "bulwark-gateway"));
    assert.ok(gateway.affinity?.podAntiAffinity);
    assert.equal(gateway.topologySpreadConstraints, undefined);
    assert.equal(gateway.nodeSelector, undefined);
    assert.equal(gateway.imagePullSecrets, undefined);
    assert.equal(gateway.priorityClassName, undefined);
    const server = podSpec(find(objects, "Deployment", "bulwark-permission-server"));
    assert.equal(server.topologySpreadConstraints?.[0]?.topologyKey, "kubernetes.io/hostname");
    assert.equal(server.affinity, undefined);
    const edge = podSpec(find(objects, "DaemonSet", "bulwark-edge-health"));
    assert.deepEqual(edge.nodeSelector, { "superedge.io/node-edge": "enable" });
    assert.deepEqual(edge.tolerations, [{ operator: "Exists" }]);
    assert.equal(edge.priorityClassName, "system-node-critical");
  });

  it("every workload takes nodeSelector, tolerations, affinity, spread, priority and pull secrets", () => {
    const affinity = {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [
            { matchExpressions: [{ key: "pool", operator: "In", values: ["x"] }] },
          ],
        },
      },
    };
    const spread = [
      {
        maxSkew: 1,
        topologyKey: "topology.kubernetes.io/zone",
        whenUnsatisfiable: "DoNotSchedule",
      },
    ];
    const objects = manifests(v => {
      v.imagePullSecrets = [{ name: "regcred" }];
      for (const workload of [v.gateway, v.permissionServer, v.edgeHealth]) {
        workload.nodeSelector = { pool: "x" };
        workload.tolerations = [
          { key: "pool", operator: "Equal", value: "x", effect: "NoSchedule" },
        ];
        workload.affinity = affinity;
        workload.topologySpreadConstraints = spread;
        workload.priorityClassName = "bulwark-critical";
      }
    });
    for (const [kind, component] of WORKLOADS) {
      const spec = podSpec(find(objects, kind, `bulwark-${component}`));
      assert.deepEqual(spec.imagePullSecrets, [{ name: "regcred" }], component);
      assert.deepEqual(spec.nodeSelector, { pool: "x" }, component);
      assert.equal(spec.tolerations?.[0]?.key, "pool", component);
      assert.deepEqual(spec.affinity, affinity, `${component}: replaces the built-in one`);
      assert.deepEqual(spec.topologySpreadConstraints, spread, component);
      assert.equal(spec.priorityClassName, "bulwark-critical", component);
    }
  });

  it("empty values set nothing: no priority class, no tolerations for the daemons", () => {
    const edge = podSpec(
      find(
        manifests(v => {
          v.edgeHealth.priorityClassName = "";
          v.edgeHealth.tolerations = [];
          v.edgeHealth.nodeSelector = {};
        }),
        "DaemonSet",
        "bulwark-edge-health",
      ),
    );
    assert.equal(edge.priorityClassName, undefined);
    assert.equal(edge.tolerations, undefined);
    assert.equal(edge.nodeSelector, undefined);
  });
});

describe("the gateway's Service", () => {
  it("takes annotations and externalTrafficPolicy; ClusterIP gets no traffic policy", () => {
    const service = (change: (v: BulwarkValues) => void) =>
      find<V1Service>(manifests(change), "Service", "bulwark-gateway");
    const byDefault = service(() => {});
    assert.equal(byDefault.spec?.externalTrafficPolicy, "Local");
    assert.equal(byDefault.metadata?.annotations, undefined);
    const changed = service(v => {
      v.gateway.service.annotations = {
        "service.beta.kubernetes.io/aws-load-balancer-type": "nlb",
      };
      v.gateway.service.externalTrafficPolicy = "Cluster";
      v.gateway.service.type = "NodePort";
    });
    assert.equal(changed.spec?.type, "NodePort");
    assert.equal(changed.spec?.externalTrafficPolicy, "Cluster");
    assert.deepEqual(changed.metadata?.annotations, {
      "service.beta.kubernetes.io/aws-load-balancer-type": "nlb",
    });
    const clusterIp = service(v => {
      v.gateway.service.type = "ClusterIP";
      v.gateway.service.externalTrafficPolicy = "Cluster";
    });
    assert.equal(clusterIp.spec?.externalTrafficPolicy, undefined);
    const headless = find<V1Service>(
      manifests(v => void (v.gateway.service.annotations = { a: "b" })),
      "Service",
      "bulwark-gateway-headless",
    );
    assert.equal(headless.metadata?.annotations, undefined, "only the traffic Service");
  });

  it("ingressClass.create: false leaves IngressClass bulwark to another release", () => {
    const objects = manifests(v => void (v.gateway.ingressClass.create = false));
    assert.ok(!objects.some(o => o.kind === "IngressClass"));
  });
});

describe("PodMonitors (metrics.podMonitor)", () => {
  interface PodMonitor extends KubernetesObject {
    spec: {
      selector: { matchLabels: Record<string, string> };
      podMetricsEndpoints: {
        port: string;
        path: string;
        interval?: string;
      }[];
    };
  }

  it("none by default", () => {
    assert.ok(!manifests().some(o => o.kind === "PodMonitor"));
  });

  it("one per enabled workload, selecting its pods, on the port that serves /metrics", () => {
    const objects = manifests(v => {
      v.metrics.podMonitor = { enabled: true, interval: "30s", labels: { release: "kps" } };
    });
    const monitors = objects.filter(o => o.kind === "PodMonitor") as PodMonitor[];
    assert.equal(monitors.length, 3);
    for (const [kind, component] of WORKLOADS) {
      const name = `bulwark-${component}`;
      const monitor = find<PodMonitor>(objects, "PodMonitor", name);
      assert.equal(monitor.metadata?.labels?.release, "kps");
      assert.equal(monitor.metadata?.labels?.[INSTANCE_LABEL], "bulwark");
      const workload = find<KubernetesObject>(objects, kind, name);
      assert.ok(selects(monitor.spec.selector.matchLabels, podTemplateLabels(workload)));
      const [endpoint] = monitor.spec.podMetricsEndpoints;
      assert.equal(endpoint?.path, "/metrics");
      assert.equal(endpoint?.interval, "30s");
      // The same port the scrape annotations name.
      const port = onlyContainer(workload).ports?.find(p => p.name === endpoint?.port);
      const annotations = (
        workload as { spec: { template: { metadata: { annotations?: Record<string, string> } } } }
      ).spec.template.metadata.annotations;
      assert.equal(String(port?.containerPort), annotations?.["prometheus.io/port"], component);
    }
    // The permission server's plain metrics port: no scheme, no CA, though its API is HTTPS.
    const server = find<PodMonitor>(objects, "PodMonitor", "bulwark-permission-server");
    assert.deepEqual(server.spec.podMetricsEndpoints, [
      { port: "metrics", path: "/metrics", interval: "30s" },
    ]);
  });

  it("the same plain endpoint with the permission server's TLS off; none for a workload turned off", () => {
    const objects = manifests(v => {
      v.metrics.podMonitor.enabled = true;
      v.permissionServer.tls.enabled = false;
      v.edgeHealth.enabled = false;
    });
    const server = find<PodMonitor>(objects, "PodMonitor", "bulwark-permission-server");
    assert.deepEqual(server.spec.podMetricsEndpoints, [{ port: "metrics", path: "/metrics" }]);
    assert.equal(objects.filter(o => o.kind === "PodMonitor").length, 2);
  });

  it("refuses an interval Prometheus would not read", () => {
    const bad = valuesFrom(IMAGE, { metrics: { podMonitor: { interval: "half a minute" } } });
    assert.deepEqual(bad.ok ? [] : bad.errors.map(e => e.field), ["metrics.podMonitor.interval"]);
  });
});

describe("one values validator (npm run build --values, and Helm's values.schema.json)", () => {
  it("refuses keys the chart's schema refuses, each named by its path", () => {
    const result = valuesFrom(IMAGE, {
      gateway: { nodeSelectr: {}, service: { anotations: {} } },
      permissionServer: { tls: { enabled: true, secret: "x" } },
      extra: 1,
    });
    assert.equal(result.ok, false);
    assert.deepEqual(result.ok ? [] : result.errors.map(e => e.field).sort(), [
      "extra",
      "gateway.nodeSelectr",
      "gateway.service.anotations",
      "permissionServer.tls.secret",
    ]);
  });

  it("takes what the schema used to refuse: gateway.nodeSelector, service annotations, global", () => {
    const result = valuesFrom(IMAGE, {
      global: { imageRegistry: "mirror.example.com", anything: { goes: [1] } },
      gateway: {
        nodeSelector: { "kubernetes.io/os": "linux" },
        service: { annotations: { "external-dns.alpha.kubernetes.io/hostname": "x.example.com" } },
      },
    });
    assert.ok(result.ok, result.ok ? "" : JSON.stringify(result.errors));
    assert.deepEqual(result.value.gateway.nodeSelector, { "kubernetes.io/os": "linux" });
  });

  it("namespace and release are Helm's command line, not values: --namespace, --release", () => {
    const result = valuesFrom(IMAGE, { namespace: "x", release: "y" });
    assert.equal(result.ok, false);
    assert.deepEqual(result.ok ? [] : result.errors.map(e => `${e.field}: ${e.message}`), [
      "namespace: is the release's, not a value: --namespace NS (helm install -n NS)",
      "release: is not a value: --release NAME (helm install NAME)",
    ]);
    const placed = valuesFrom(IMAGE, {}, { namespace: "edge-system", release: "edge" });
    assert.ok(placed.ok);
    assert.equal(placed.value.namespace, "edge-system");
    assert.equal(placed.value.release, "edge");
  });

  it("a quantity may be a YAML number, as Kubernetes and the chart's schema take it", () => {
    const result = valuesFrom(IMAGE, { gateway: { resources: { limits: { cpu: 4 } } } });
    assert.ok(result.ok);
    assert.equal(result.value.gateway.resources.limits.cpu, 4);
    const bad = valuesFrom(IMAGE, { gateway: { resources: { limits: { cpu: -1 } } } });
    assert.equal(bad.ok, false);
  });
});
