import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { V1Pod } from "@kubernetes/client-node";
import {
  bulwarkInitContainer,
  freeVolumeName,
  tokenVolume,
  type InjectConfig,
} from "../../core/permission";
import { chooseNode, nextPodIp, planPod, podStatus, relocateMounts } from "./pod-plan";

const IMAGE = "bulwark:local";
const CONFIG: InjectConfig = {
  image: IMAGE,
  serverUrl: "http://127.0.0.1:8444",
  audience: "bulwark-permission-server",
  tokenExpirationSeconds: 3600,
  ownNamespace: "bulwark-system",
};

/** A pod as the pod-permission injection leaves it: Bulwark's init container and its token. */
function injectedPod(extra: Partial<NonNullable<V1Pod["spec"]>> = {}): V1Pod {
  const volume = freeVolumeName([]);
  return {
    metadata: { name: "web", namespace: "shop", uid: "u-1" },
    spec: {
      nodeName: "bulwark-local",
      containers: [{ name: "app", image: "nginx" }],
      initContainers: [bulwarkInitContainer("readers", volume, CONFIG) as never],
      volumes: [tokenVolume(volume, CONFIG) as never],
      ...extra,
    },
    status: { podIP: "198.51.100.1" },
  };
}

describe("pod runner plan", () => {
  it("runs Bulwark's injected init container with its Downward API env and its projected token", () => {
    const plan = planPod(injectedPod(), IMAGE);
    assert.ok(plan.ok);
    const [init] = plan.inits;
    assert.equal(init?.container, "bulwark-init");
    assert.equal(init?.env.POD_NAME, "web");
    assert.equal(init?.env.POD_NAMESPACE, "shop");
    assert.equal(init?.env.POD_UID, "u-1");
    assert.equal(init?.env.POD_IP, "198.51.100.1");
    assert.equal(init?.env.BULWARK_PERMISSION_GROUP, "readers");
    assert.deepEqual(init?.files, [
      {
        volume: "bulwark-token",
        mountPath: "/var/run/secrets/bulwark.dev/serviceaccount",
        path: "token",
        source: { token: { audience: "bulwark-permission-server", expirationSeconds: 3600 } },
      },
    ]);
  });

  it("fills the service-account volume the API server adds: token, CA ConfigMap, namespace", () => {
    const pod = injectedPod();
    const api = "kube-api-access-x";
    pod.spec?.initContainers?.[0]?.volumeMounts?.push({ name: api, mountPath: "/sa" });
    pod.spec?.volumes?.push({
      name: api,
      projected: {
        sources: [
          { serviceAccountToken: { path: "token", expirationSeconds: 3607 } },
          { configMap: { name: "kube-root-ca.crt", items: [{ key: "ca.crt", path: "ca.crt" }] } },
          {
            downwardAPI: {
              items: [{ path: "namespace", fieldRef: { fieldPath: "metadata.namespace" } }],
            },
          },
        ],
      },
    });
    const plan = planPod(pod, IMAGE);
    assert.ok(plan.ok);
    const files = plan.inits[0]?.files.filter(f => f.volume === api);
    assert.deepEqual(
      files?.map(f => [f.path, f.source]),
      [
        ["token", { token: { audience: undefined, expirationSeconds: 3607 } }],
        ["ca.crt", { configMap: { name: "kube-root-ca.crt", key: "ca.crt", optional: false } }],
        ["namespace", { value: "shop" }],
      ],
    );
  });

  it("refuses a mount of a volume that is not projected", () => {
    const pod = injectedPod();
    pod.spec?.initContainers?.[0]?.volumeMounts?.push({ name: "data", mountPath: "/data" });
    pod.spec?.volumes?.push({ name: "data", emptyDir: {} });
    const plan = planPod(pod, IMAGE);
    assert.match(plan.ok ? "" : plan.reason, /volume data is not a projected volume/);
  });

  it("refuses an init container that is not Bulwark's own, and says which", () => {
    const pod = injectedPod();
    pod.spec?.initContainers?.push({ name: "migrate", image: "postgres:16" });
    const plan = planPod(pod, IMAGE);
    assert.equal(plan.ok, false);
    assert.match(plan.ok ? "" : plan.reason, /init container migrate \(image postgres:16\)/);
  });

  it("refuses bulwark-init from another image, and env from a Secret", () => {
    assert.equal(planPod(injectedPod(), "ghcr.io/other:1").ok, false);
    const pod = injectedPod();
    pod.spec?.initContainers?.[0]?.env?.push({
      name: "PASSWORD",
      valueFrom: { secretKeyRef: { name: "s", key: "k" } },
    });
    const plan = planPod(pod, IMAGE);
    assert.match(plan.ok ? "" : plan.reason, /env PASSWORD comes from a Secret/);
  });

  it("a pod without init containers has nothing to run", () => {
    assert.deepEqual(planPod({ spec: { containers: [{ name: "a" }] } }, IMAGE), {
      ok: true,
      inits: [],
    });
  });

  it("moves paths under a token mount to where the token was written", () => {
    const env = relocateMounts(
      { BULWARK_TOKEN_PATH: "/var/run/secrets/x/token", OTHER: "/var/run/secrets/xy" },
      [{ mountPath: "/var/run/secrets/x", localDir: "/tmp/pod/volumes/t" }],
    );
    assert.deepEqual(env, {
      BULWARK_TOKEN_PATH: "/tmp/pod/volumes/t/token",
      OTHER: "/var/run/secrets/xy",
    });
  });

  it("gives the lowest free documentation address", () => {
    assert.equal(nextPodIp(new Set()), "198.51.100.1");
    assert.equal(nextPodIp(new Set(["198.51.100.1", "198.51.100.3"])), "198.51.100.2");
  });

  it("binds to the first node that fits the nodeSelector, and never for another scheduler", () => {
    const nodes = [
      { name: "bulwark-local", labels: { "kubernetes.io/hostname": "bulwark-local" } },
      { name: "bulwark-edge-1", labels: { "kubernetes.io/hostname": "bulwark-edge-1" } },
    ];
    assert.equal(chooseNode({ spec: { containers: [] } }, nodes), "bulwark-local");
    const edge = { "kubernetes.io/hostname": "bulwark-edge-1" };
    assert.equal(
      chooseNode({ spec: { containers: [], nodeSelector: edge } }, nodes),
      "bulwark-edge-1",
    );
    const other = { containers: [], schedulerName: "volcano" };
    assert.equal(chooseNode({ spec: other }, nodes), undefined);
  });
});

describe("pod status as kubelet writes it", () => {
  const placement = { podIP: "198.51.100.1", hostIP: "10.0.0.5", startTime: "t0" };
  const condition = (s: ReturnType<typeof podStatus>, type: string) =>
    s.conditions.find(c => c.type === type)?.status;

  it("while bulwark-init runs: Pending, Init:0/1 (init running, app waiting), not Initialized", () => {
    const status = podStatus(injectedPod(), placement, { state: "running", index: 0 }, "t1");
    assert.equal(status.phase, "Pending");
    assert.equal(status.podIP, "198.51.100.1");
    assert.ok(status.initContainerStatuses[0]?.state.running);
    assert.equal(status.containerStatuses[0]?.state.waiting?.reason, "PodInitializing");
    assert.equal(condition(status, "Initialized"), "False");
    assert.equal(condition(status, "Ready"), "False");
  });

  it("once it completed: Running, init terminated Completed, containers running and Ready", () => {
    const status = podStatus(injectedPod(), placement, { state: "done" }, "t2");
    assert.equal(status.phase, "Running");
    assert.equal(status.initContainerStatuses[0]?.state.terminated?.reason, "Completed");
    assert.ok(status.containerStatuses[0]?.state.running);
    for (const type of ["Initialized", "Ready", "ContainersReady", "PodScheduled"]) {
      assert.equal(condition(status, type), "True", type);
    }
  });

  it("after a failed run: back-off, the exit code and its last log line in lastState", () => {
    const failed = { state: "failed", index: 0, exitCode: 1, message: "refused", restarts: 2 };
    const status = podStatus(injectedPod(), placement, failed as never, "t3");
    const init = status.initContainerStatuses[0];
    assert.equal(status.phase, "Pending");
    assert.equal(init?.restartCount, 2);
    assert.equal(init?.state.waiting?.reason, "CrashLoopBackOff");
    assert.deepEqual(
      {
        code: init?.lastState?.terminated?.exitCode,
        message: init?.lastState?.terminated?.message,
      },
      { code: 1, message: "refused" },
    );
  });
});
