// The workload manifest generators (packaging/manifests): one image everywhere, probes on the ports the
// workloads serve, env the workloads' own settings parsers accept, least-privilege RBAC.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type {
  KubernetesObject,
  V1ClusterRole,
  V1ClusterRoleBinding,
  V1DaemonSet,
  V1Deployment,
  V1IngressClass,
  V1PodDisruptionBudget,
  V1Role,
  V1Service,
  V1StatefulSet,
} from "@kubernetes/client-node";
import {
  defaultValues,
  parseValues,
  moduleEnv,
  workloadManifests,
  type BulwarkValues,
} from "./manifests";
import { PART_OF_LABEL } from "./manifests/common";
import { permissionServerUrl } from "./manifests/permission-server";
import { readSettings as gatewaySettings } from "../gateway/settings";
import { guardModes } from "../capabilities/ingress-guard/scope";
import { parseSettings as edgeSettings } from "../edge-health-daemon/settings";
import { loadSettings as permissionSettings } from "../permission-server/settings";
import { find, onlyContainer, podSpec, podTemplateLabels, processEnv, selects } from "./testkit";

const IMAGE = "registry.example.com/team/bulwark:1.2.3";

function manifests(change: (v: BulwarkValues) => void = () => {}): KubernetesObject[] {
  const values = defaultValues(IMAGE);
  change(values);
  return workloadManifests(values);
}

const WORKLOADS: [kind: string, name: string][] = [
  ["StatefulSet", "bulwark-gateway"],
  ["Deployment", "bulwark-permission-server"],
  ["DaemonSet", "bulwark-edge-health"],
];

describe("workload manifests", () => {
  const objects = manifests();

  it("start with Bulwark's namespace, then ServiceAccounts and RBAC before the workloads", () => {
    assert.equal(objects[0]?.kind, "Namespace");
    assert.equal(objects[0]?.metadata?.name, "bulwark-system");
    const index = (kind: string) => objects.findIndex(o => o.kind === kind);
    for (const [kind] of WORKLOADS) {
      assert.ok(index("ServiceAccount") < index(kind), `ServiceAccounts before the ${kind}`);
      assert.ok(index("ClusterRoleBinding") < index(kind), `RBAC before the ${kind}`);
    }
  });

  it("run the one image, with the program as the first argument, in every container", () => {
    const programs = {
      StatefulSet: "gateway",
      Deployment: "permission-server",
      DaemonSet: "edge-health",
    };
    for (const [kind, name] of WORKLOADS) {
      const container = onlyContainer(find(objects, kind, name));
      assert.equal(container.image, IMAGE, `${kind} ${name}`);
      assert.deepEqual(container.args, [programs[kind as keyof typeof programs]]);
      assert.equal(container.command, undefined, "the image's entrypoint (bin/bulwark.js) runs");
    }
  });

  it("label every object it owns with app.kubernetes.io/part-of=bulwark (uninstall finds them so)", () => {
    const unlabelled = objects
      .filter(o => o.metadata?.labels?.[PART_OF_LABEL] !== "bulwark")
      .map(o => `${o.kind} ${o.metadata?.name}`);
    // The zone ConfigMap lives in kube-system, which the install never declares or owns.
    assert.deepEqual(unlabelled, []);
  });

  it("run non-root with a read-only root, requests and limits, and probes on named ports", () => {
    for (const [kind, name] of WORKLOADS) {
      const workload = find<KubernetesObject>(objects, kind, name);
      const spec = podSpec(workload);
      const container = onlyContainer(workload);
      assert.equal(spec.securityContext?.runAsNonRoot, true, `${name} runAsNonRoot`);
      assert.equal(container.securityContext?.readOnlyRootFilesystem, true);
      assert.equal(container.securityContext?.allowPrivilegeEscalation, false);
      assert.deepEqual(container.securityContext?.capabilities?.drop, ["ALL"]);
      // The image runs compiled JavaScript and writes no temp files: no emptyDir on /tmp.
      assert.ok(!container.volumeMounts?.some(m => m.mountPath === "/tmp"), `${name}: no /tmp`);
      for (const key of ["requests", "limits"] as const) {
        assert.ok(container.resources?.[key]?.cpu, `${name} ${key}.cpu`);
        assert.ok(container.resources?.[key]?.memory, `${name} ${key}.memory`);
      }
      const portNames = new Set(container.ports?.map(p => p.name));
      for (const probe of [container.livenessProbe, container.readinessProbe]) {
        assert.ok(probe?.httpGet, `${name} has HTTP probes`);
        assert.ok(
          portNames.has(String(probe.httpGet.port)),
          `${name} probe port ${probe.httpGet.port}`,
        );
      }
    }
  });

  it("gateway: StatefulSet behind a headless Service, probes on admin /healthz and /readyz", () => {
    const sts = find<V1StatefulSet>(objects, "StatefulSet", "bulwark-gateway");
    const headless = find<V1Service>(objects, "Service", sts.spec?.serviceName ?? "");
    assert.equal(headless.spec?.clusterIP, "None");
    const container = onlyContainer(sts);
    assert.deepEqual(
      container.ports?.map(p => [p.name, p.containerPort]),
      [
        ["http", 8080],
        ["https", 8443],
        ["admin", 9090],
      ],
    );
    assert.equal(container.livenessProbe?.httpGet?.path, "/healthz");
    assert.equal(container.readinessProbe?.httpGet?.path, "/readyz");
    assert.equal(container.readinessProbe?.httpGet?.port, "admin");
    assert.equal(sts.spec?.replicas, 2);
    assert.equal(sts.spec?.ordinals, undefined, "ordinals from 0 by default");
    assert.equal(sts.spec?.volumeClaimTemplates?.[0]?.metadata?.name, "state");
    const traffic = find<V1Service>(objects, "Service", "bulwark-gateway");
    assert.equal(traffic.spec?.type, "LoadBalancer");
    assert.deepEqual(
      traffic.spec?.ports?.map(p => [p.port, p.targetPort]),
      [
        [80, "http"],
        [443, "https"],
      ],
    );
  });

  it("gateway: ordinals, replicas, ports, service type and persistence follow the values", () => {
    const changed = manifests(v => {
      v.gateway.replicas = 3;
      v.gateway.ordinalStart = 5;
      v.gateway.ports.admin = 9191;
      v.gateway.service.type = "ClusterIP";
      v.gateway.persistence.enabled = false;
    });
    const sts = find<V1StatefulSet>(changed, "StatefulSet", "bulwark-gateway");
    assert.equal(sts.spec?.replicas, 3);
    assert.deepEqual(sts.spec?.ordinals, { start: 5 });
    assert.equal(sts.spec?.volumeClaimTemplates, undefined);
    assert.ok(podSpec(sts).volumes?.some(v => v.name === "state" && v.emptyDir));
    assert.equal(sts.spec?.template.metadata?.annotations?.["prometheus.io/port"], "9191");
    const traffic = find<V1Service>(changed, "Service", "bulwark-gateway");
    assert.equal(traffic.spec?.type, "ClusterIP");
    assert.equal(traffic.spec?.externalTrafficPolicy, undefined);
  });

  it("gateway: IngressClass bulwark for controller bulwark.dev/gateway, default only when asked", () => {
    const cls = find<V1IngressClass>(objects, "IngressClass", "bulwark");
    assert.equal(cls.spec?.controller, "bulwark.dev/gateway");
    assert.equal(cls.metadata?.annotations, undefined);
    const byDefault = find<V1IngressClass>(
      manifests(v => void (v.gateway.ingressClass.default = true)),
      "IngressClass",
      "bulwark",
    );
    assert.equal(
      byDefault.metadata?.annotations?.["ingressclass.kubernetes.io/is-default-class"],
      "true",
    );
  });

  it("gateway: the env is what gateway/settings.ts accepts, with the values' ports and switches", () => {
    const sts = find<V1StatefulSet>(
      manifests(v => {
        v.gateway.checksum = {
          ingress: true,
          secret: false,
          publisherNamespaces: ["release"],
          requireSignature: true,
          keysConfigMap: "publisher-keys",
        };
        v.gateway.watchNamespaces = ["shop", "blog"];
        v.gateway.trustedProxies = ["10.0.0.0/8", "2001:db8::/32"];
        v.gateway.proxyProtocol = true;
        v.gateway.http2 = false;
        v.gateway.http2Cleartext = true;
        v.gateway.limitStatus = 429;
        v.gateway.listenMode = "reuse-port";
      }),
      "StatefulSet",
      "bulwark-gateway",
    );
    const env = processEnv(onlyContainer(sts).env, { "metadata.name": "bulwark-gateway-3" });
    const read = gatewaySettings(env);
    assert.ok(read.ok, read.ok ? "" : read.message);
    assert.equal(read.settings.ordinal, 3);
    assert.equal(read.settings.adminPort, 9090);
    assert.equal(read.settings.workers, 2);
    assert.equal(read.settings.listenMode, "reuse-port");
    // The old booleans still mean enforce and off.
    assert.deepEqual(read.settings.checksum, { ingress: "enforce", secret: "off" });
    assert.deepEqual(read.settings.watchNamespaces, ["shop", "blog"]);
    assert.deepEqual(read.settings.frontDoor.trustedProxies, ["10.0.0.0/8", "2001:db8::/32"]);
    assert.equal(read.settings.frontDoor.proxyProtocol, true);
    assert.equal(read.settings.frontDoor.http2, false);
    assert.equal(read.settings.frontDoor.http2Cleartext, true);
    assert.equal(read.settings.compile.traffic.limits?.status, 429);
    assert.deepEqual(read.settings.signatures, {
      required: true,
      keys: { namespace: "bulwark-system", name: "publisher-keys" },
    });
    assert.equal(
      read.settings.stateDir,
      onlyContainer(sts).volumeMounts?.find(m => m.name === "state")?.mountPath,
    );
  });

  it("gateway and Pepr module: the chart's default guard mode is observe, given to both", () => {
    const all = manifests(() => {});
    const sts = find<V1StatefulSet>(all, "StatefulSet", "bulwark-gateway");
    const env = processEnv(onlyContainer(sts).env, { "metadata.name": "bulwark-gateway-0" });
    const read = gatewaySettings(env);
    assert.ok(read.ok, read.ok ? "" : read.message);
    assert.deepEqual(read.settings.checksum, { ingress: "observe", secret: "observe" });
    const module = new Map(moduleEnv(defaultValues(IMAGE)).map(e => [e.name, e.value]));
    assert.deepEqual(guardModes(Object.fromEntries(module)), {
      ingress: "observe",
      secret: "observe",
    });
  });

  it("permission server: Deployment and Service on the URL the Pepr module injects, HTTPS by default", () => {
    const values = defaultValues(IMAGE);
    const objects = workloadManifests(values);
    assert.equal(
      permissionServerUrl(values),
      "https://bulwark-permission-server.bulwark-system.svc:8443",
    );
    const deployment = find<V1Deployment>(objects, "Deployment", "bulwark-permission-server");
    const service = find<V1Service>(objects, "Service", "bulwark-permission-server");
    assert.ok(selects(service.spec?.selector, podTemplateLabels(deployment)));
    assert.deepEqual(
      service.spec?.ports?.map(p => [p.port, p.targetPort]),
      [[8443, "api"]],
    );
    const container = onlyContainer(deployment);
    const env = processEnv(container.env, {
      "metadata.name": "bulwark-permission-server-abc",
      "metadata.namespace": "bulwark-system",
    });
    const read = permissionSettings(env, []);
    assert.ok(read.ok, read.ok ? "" : read.message);
    assert.equal(read.settings.port, 8443);
    // /metrics in plain HTTP on its own port, which the scrape annotations name: no CA needed.
    assert.equal(read.settings.metricsPort, 9465);
    const metricsPort = container.ports?.find(p => p.name === "metrics")?.containerPort;
    assert.equal(metricsPort, 9465);
    const annotations = deployment.spec?.template.metadata?.annotations ?? {};
    assert.equal(annotations["prometheus.io/port"], "9465");
    assert.equal(annotations["prometheus.io/scheme"], undefined);
    assert.equal(read.settings.namespace, "bulwark-system");
    assert.equal(read.settings.replica, "bulwark-permission-server-abc");
    assert.equal(read.settings.audience, "bulwark-permission-server");
    // HTTPS from the mounted TLS Secret; the probes speak it too.
    const mount = container.volumeMounts?.find(m => m.name === "tls")?.mountPath;
    assert.equal(read.settings.tls?.certPath, `${mount}/tls.crt`);
    assert.equal(read.settings.tls?.keyPath, `${mount}/tls.key`);
    assert.equal(container.readinessProbe?.httpGet?.scheme, "HTTPS");
    assert.equal(
      podSpec(deployment).volumes?.find(v => v.name === "tls")?.secret?.secretName,
      "bulwark-permission-server-tls",
    );
  });

  it("permission server: plain HTTP when tls is off, and the module is told an http:// URL", () => {
    const values = defaultValues(IMAGE);
    values.permissionServer.tls.enabled = false;
    const deployment = find<V1Deployment>(
      workloadManifests(values),
      "Deployment",
      "bulwark-permission-server",
    );
    const container = onlyContainer(deployment);
    const read = permissionSettings(
      processEnv(container.env, {
        "metadata.name": "p",
        "metadata.namespace": "bulwark-system",
      }),
      [],
    );
    assert.ok(read.ok && read.settings.tls === undefined);
    assert.equal(container.readinessProbe?.httpGet?.scheme, "HTTP");
    assert.equal(podSpec(deployment).volumes?.some(v => v.name === "tls") ?? false, false);
    assert.equal(
      permissionServerUrl(values),
      "http://bulwark-permission-server.bulwark-system.svc:8443",
    );
  });

  it("edge health: a DaemonSet on edge nodes, host network, tolerating taints, env its settings accept", () => {
    const ds = find<V1DaemonSet>(objects, "DaemonSet", "bulwark-edge-health");
    const spec = podSpec(ds);
    assert.equal(spec.hostNetwork, true);
    assert.equal(spec.dnsPolicy, "ClusterFirstWithHostNet");
    assert.deepEqual(spec.nodeSelector, { "superedge.io/node-edge": "enable" });
    assert.deepEqual(spec.tolerations, [{ operator: "Exists" }]);
    const container = onlyContainer(ds);
    assert.equal(container.livenessProbe?.httpGet?.path, "/healthz");
    const env = processEnv(container.env, { "spec.nodeName": "edge-1" });
    const read = edgeSettings([], env);
    assert.equal(read.kind, "ok", read.kind === "error" ? read.message : "");
    if (read.kind !== "ok") return;
    assert.equal(read.settings.nodeName, "edge-1");
    assert.equal(read.settings.port, container.ports?.[0]?.containerPort);
    // The HMAC key is the mounted Secret, not an API read.
    const mount = container.volumeMounts?.find(m => m.name === "hmac")?.mountPath ?? "";
    assert.ok(read.settings.hmacKeyFile?.startsWith(`${mount}/`), read.settings.hmacKeyFile);
    const secret = spec.volumes?.find(v => v.name === "hmac")?.secret;
    assert.equal(secret?.secretName, "bulwark-edge-health-hmac");
    assert.equal(read.settings.zoneNamespace, "kube-system");
  });

  it("edge health: node selector, tolerations and the zone ConfigMap follow the values", () => {
    const changed = manifests(v => {
      v.edgeHealth.nodeSelector = { "node-role.kubernetes.io/edge": "" };
      v.edgeHealth.tolerations = [{ key: "edge", operator: "Exists", effect: "NoSchedule" }];
      v.edgeHealth.zones = {
        configNamespace: "edge-system",
        manageConfig: true,
        taintZoneAdmission: true,
        maxUnknownSeconds: 600,
      };
    });
    const spec = podSpec(find(changed, "DaemonSet", "bulwark-edge-health"));
    assert.deepEqual(spec.nodeSelector, { "node-role.kubernetes.io/edge": "" });
    assert.equal(spec.tolerations?.[0]?.key, "edge");
    const cm = find<{ data: Record<string, string>; metadata: { namespace: string } }>(
      changed,
      "ConfigMap",
      "edge-health-zone-config",
    );
    assert.equal(cm.metadata.namespace, "edge-system");
    assert.deepEqual(cm.data, { TaintZoneAdmission: "true", MaxUnknownSeconds: "600" });
    assert.equal(
      objects.find(o => o.kind === "ConfigMap"),
      undefined,
      "not managed by default",
    );
  });

  it("edge health: the kubelet check's settings and CA file reach the daemon, which accepts them", () => {
    const daemonSet = (change: (v: BulwarkValues) => void) =>
      find<V1DaemonSet>(manifests(change), "DaemonSet", "bulwark-edge-health");
    const kubeletPlugin = (ds: V1DaemonSet) => {
      const env = processEnv(onlyContainer(ds).env, { "spec.nodeName": "edge-1" });
      const read = edgeSettings([], env);
      assert.equal(read.kind, "ok", read.kind === "error" ? read.message : "");
      return read.kind === "ok" ? read.settings.checks.find(c => c.kind === "kubelet") : undefined;
    };
    const byDefault = find<V1DaemonSet>(objects, "DaemonSet", "bulwark-edge-health");
    assert.equal(
      onlyContainer(byDefault).env?.find(e => e.name === "BULWARK_EDGE_CHECK_KUBELET"),
      undefined,
      "the daemon's defaults by default",
    );
    assert.equal(kubeletPlugin(byDefault)?.caFile, undefined, "unverified, as SuperEdge");

    const verified = daemonSet(v => {
      v.edgeHealth.checks = {
        daemon: "",
        kubelet: "weight=1",
        tcp: "weight=0.5,port=22",
        kubeletCaHostPath: "/etc/kubernetes/pki/ca.crt",
      };
    });
    const plugin = kubeletPlugin(verified);
    assert.equal(plugin?.weight, 1);
    const mount = onlyContainer(verified).volumeMounts?.find(m => m.name === "kubelet-ca");
    assert.equal(plugin?.caFile, mount?.mountPath);
    assert.equal(mount?.readOnly, true);
    assert.deepEqual(podSpec(verified).volumes?.find(v => v.name === "kubelet-ca")?.hostPath, {
      path: "/etc/kubernetes/pki/ca.crt",
      type: "File",
    });

    const tcp = (ds: V1DaemonSet) => {
      const read = edgeSettings([], processEnv(onlyContainer(ds).env, { "spec.nodeName": "e" }));
      return read.kind === "ok" ? read.settings.checks.find(c => c.kind === "tcp") : undefined;
    };
    assert.equal(tcp(verified)?.port, 22);
    const off = daemonSet(v => {
      v.edgeHealth.checks.kubelet = "off";
      v.edgeHealth.checks.daemon = "weight=1";
    });
    assert.equal(kubeletPlugin(off), undefined, "off turns the check off");
  });

  it("edge health: check values that contradict each other are refused, naming the field", () => {
    const problems = (kubelet: string, kubeletCaHostPath: string) => {
      const values = defaultValues(IMAGE);
      values.edgeHealth.checks = { daemon: "", kubelet, tcp: "", kubeletCaHostPath };
      const parsed = parseValues(values);
      return parsed.ok ? [] : parsed.errors.map(e => `${e.field}: ${e.message}`);
    };
    assert.deepEqual(problems("off", "/ca.crt"), [
      "edgeHealth.checks.kubeletCaHostPath: is set but the kubelet check is off",
    ]);
    assert.deepEqual(problems("weight=1,ca-file=/x", "/ca.crt"), [
      "edgeHealth.checks.kubelet: names a ca-file while kubeletCaHostPath sets one; keep one",
    ]);
    assert.deepEqual(problems("", "ca.crt"), [
      "edgeHealth.checks.kubeletCaHostPath: must be an absolute path or empty",
    ]);
  });

  it("PodDisruptionBudgets select the gateway's and the permission server's pods", () => {
    for (const [kind, name] of WORKLOADS.slice(0, 2)) {
      const pdb = find<V1PodDisruptionBudget>(objects, "PodDisruptionBudget", name);
      assert.equal(pdb.spec?.maxUnavailable, 1);
      assert.ok(
        selects(pdb.spec?.selector?.matchLabels, podTemplateLabels(find(objects, kind, name))),
      );
    }
    assert.equal(objects.filter(o => o.kind === "PodDisruptionBudget").length, 2);
  });

  it("Services select their workload's pods and target declared container ports", () => {
    for (const service of objects.filter(o => o.kind === "Service") as V1Service[]) {
      const workload = WORKLOADS.map(([k, n]) => find<KubernetesObject>(objects, k, n)).find(w =>
        selects(service.spec?.selector, podTemplateLabels(w)),
      );
      assert.ok(workload, `Service ${service.metadata?.name} selects a workload`);
      const names = new Set(onlyContainer(workload).ports?.map(p => p.name));
      for (const port of service.spec?.ports ?? []) assert.ok(names.has(String(port.targetPort)));
    }
  });

  it("Prometheus scrape annotations point at each /metrics, and go away when turned off", () => {
    const gateway = find<V1StatefulSet>(objects, "StatefulSet", "bulwark-gateway");
    assert.deepEqual(gateway.spec?.template.metadata?.annotations, {
      "prometheus.io/scrape": "true",
      "prometheus.io/port": "9090",
      "prometheus.io/path": "/metrics",
    });
    const server = find<V1Deployment>(objects, "Deployment", "bulwark-permission-server");
    const port = server.spec?.template.metadata?.annotations?.["prometheus.io/port"];
    assert.ok(onlyContainer(server).ports?.some(p => String(p.containerPort) === port));
    const off = manifests(v => void (v.metrics.scrape = false));
    for (const [kind, name] of WORKLOADS) {
      const annotations =
        find<V1StatefulSet>(off, kind, name).spec?.template.metadata?.annotations ?? {};
      assert.equal(annotations["prometheus.io/scrape"], undefined, name);
    }
  });

  it("RBAC: one ServiceAccount per workload, bound to its own roles, no wildcards", () => {
    const accounts = objects.filter(o => o.kind === "ServiceAccount").map(o => o.metadata?.name);
    assert.deepEqual(accounts, [
      "bulwark-gateway",
      "bulwark-permission-server",
      "bulwark-edge-health",
    ]);
    for (const [, name] of WORKLOADS) {
      assert.equal(
        podSpec(find(objects, WORKLOADS.find(w => w[1] === name)?.[0] ?? "", name))
          .serviceAccountName,
        name,
      );
    }
    const roles = objects.filter(o => o.kind === "ClusterRole" || o.kind === "Role") as V1Role[];
    for (const rule of roles.flatMap(r => r.rules ?? [])) {
      assert.ok(
        !rule.verbs.includes("*") &&
          !rule.resources?.includes("*") &&
          !rule.apiGroups?.includes("*"),
      );
    }
    for (const binding of objects.filter(o =>
      o.kind?.endsWith("RoleBinding"),
    ) as V1ClusterRoleBinding[]) {
      assert.equal(binding.roleRef.name, binding.metadata?.name);
      assert.deepEqual(binding.subjects, [
        { kind: "ServiceAccount", name: binding.metadata?.name, namespace: "bulwark-system" },
      ]);
    }
  });

  it("RBAC: the gateway only reads; Secrets are never listed by the permission server or the daemon", () => {
    const gateway = find<V1ClusterRole>(objects, "ClusterRole", "bulwark-gateway");
    const verbs = new Set(gateway.rules?.flatMap(r => r.verbs));
    assert.deepEqual([...verbs].sort(), ["list", "watch"]);
    for (const name of ["bulwark-permission-server", "bulwark-edge-health"]) {
      const rules = objects
        .filter(o => (o.kind === "ClusterRole" || o.kind === "Role") && o.metadata?.name === name)
        .flatMap(o => (o as V1Role).rules ?? []);
      const secretVerbs = rules.filter(r => r.resources?.includes("secrets")).flatMap(r => r.verbs);
      assert.ok(!secretVerbs.includes("list") && !secretVerbs.includes("watch"), name);
    }
  });

  it("components can be turned off; the checksum publisher policy stays (the guard runs in the Pepr module)", () => {
    const none = manifests(v => {
      v.gateway.enabled = false;
      v.permissionServer.enabled = false;
      v.edgeHealth.enabled = false;
    });
    assert.deepEqual(
      none.map(o => o.kind),
      ["Namespace", "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding", "ClusterRole"],
    );
  });

  it("the publisher policy and the Pepr module name the same publisher namespaces", () => {
    const objects = manifests(v => {
      v.gateway.checksum.publisherNamespaces = ["release", "bulwark-system"];
    });
    const policy = find<KubernetesObject & { spec: { matchConditions: { expression: string }[] } }>(
      objects,
      "ValidatingAdmissionPolicy",
      "bulwark-checksum-publishers",
    );
    assert.equal(
      policy.spec.matchConditions[0]?.expression,
      "(!(request.namespace in ['release', 'bulwark-system']))",
    );
  });

  it("PermissionProviders from the values are created, labelled as part of the install", () => {
    const withProvider = manifests(v => {
      v.permissionServer.providers = [
        { name: "cmdb", spec: { type: "http", address: "https://cmdb.example.com" } },
      ];
    });
    const provider = find<KubernetesObject & { spec: unknown }>(
      withProvider,
      "PermissionProvider",
      "cmdb",
    );
    assert.equal(provider.apiVersion, "bulwark.dev/v1alpha1");
    assert.deepEqual(provider.spec, { type: "http", address: "https://cmdb.example.com" });
  });
});

describe("values", () => {
  it("accepts the defaults", () => {
    const parsed = parseValues(defaultValues(IMAGE));
    assert.ok(parsed.ok);
  });

  it("names the field of a bad value", () => {
    const values = defaultValues(IMAGE) as unknown as {
      gateway: { replicas: number; resources: { limits: { memory: string } } };
    };
    values.gateway.replicas = 0;
    values.gateway.resources.limits.memory = "lots";
    const parsed = parseValues(values);
    assert.equal(parsed.ok, false);
    if (parsed.ok) return;
    assert.deepEqual(
      parsed.errors.map(e => e.field),
      ["gateway.replicas", "gateway.resources.limits.memory"],
    );
  });
});
