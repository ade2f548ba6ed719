// Every way an attempt can end releases its claim and stops its renew timer, and a throw after
// the claim counts as a failed attempt (backoff, breaker, Event). Faults are injected into the
// replica's own API clients, one call at a time, against the real API server.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { V1Pod } from "@kubernetes/client-node";
import { waitUntil } from "../../harness/wait";
import { ClaimedPod } from "../../../permission-server/pods/claimed-pod";
import { makeKube, type Kube } from "../../../permission-server/kube";
import type { RunningServer } from "../../../permission-server/server";
import type { AuthzApi } from "../../harness/authz-api";
import { testCluster, testNamespace } from "../../harness/cluster";
import {
  annotation,
  createGroup,
  createPod,
  deleteProvider,
  podToken,
  runInitFor,
  setPodIp,
  startAuthzProvider,
  startRoutedReplicas,
} from "./helpers";

const cluster = testCluster();
const CLAIM = "permission.bulwark.dev/claim";

type Fault = { api: "core" | "custom"; method: string; when: (request: never) => boolean };

/** The replica's clients, with faults that fail one matching call each (HTTP 500). */
function faultyKube(real: Kube): { kube: Kube; inject: (fault: Fault) => Promise<void> } {
  const armed: { fault: Fault; fired: () => void }[] = [];
  const wrap = <T extends object>(api: "core" | "custom", target: T): T =>
    new Proxy(target, {
      get(object, property) {
        const value = Reflect.get(object, property) as unknown;
        if (typeof value !== "function") return value;
        return (request: never, ...rest: unknown[]) => {
          const index = armed.findIndex(
            a => a.fault.api === api && a.fault.method === property && a.fault.when(request),
          );
          if (index >= 0) {
            const [hit] = armed.splice(index, 1);
            hit?.fired();
            return Promise.reject(
              Object.assign(new Error(`injected: HTTP 500 from ${String(property)}`), {
                code: 500,
              }),
            );
          }
          return (value as (...args: unknown[]) => unknown).apply(object, [request, ...rest]);
        };
      },
    });
  const kube = { ...real, core: wrap("core", real.core), custom: wrap("custom", real.custom) };
  /** Arms `fault`; resolves when it has fired. */
  const inject = (fault: Fault) => new Promise<void>(fired => armed.push({ fault, fired }));
  return { kube, inject };
}

describe("permission server: an attempt that throws after its claim", () => {
  let ns: string;
  let drop: () => Promise<void>;
  let authz: AuthzApi;
  let provider: string;
  let server: RunningServer;
  let inject: (fault: Fault) => Promise<void>;

  before(async () => {
    [ns, drop] = await testNamespace(cluster, "perm-faults");
    ({ authz, provider } = await startAuthzProvider(cluster, ns, { grantLatencyMs: 50 }, 1));
    const faulty = faultyKube(makeKube(cluster.kubeconfigPath));
    inject = faulty.inject;
    [server] = (await startRoutedReplicas(cluster, ns, { count: 1, kube: faulty.kube })) as [
      RunningServer,
    ];
  });

  after(async () => {
    await server?.stop();
    await authz?.close();
    await deleteProvider(cluster, provider);
    await drop();
  });

  async function grantEvents(pod: string): Promise<string[]> {
    const events = await cluster.core.listNamespacedEvent({
      namespace: ns,
      fieldSelector: `involvedObject.name=${pod}`,
    });
    return events.items
      .filter(e => e.reason?.startsWith("Grant"))
      .map(e => `${e.reason}: ${e.message}`);
  }

  /** A pod of a fresh group, the fault armed, then the init client until it is granted. */
  async function grantThrough(name: string, ip: string, faults: ((pod: V1Pod) => Fault)[]) {
    await createGroup(cluster, ns, name, {
      permissions: [{ name: "read", provider, params: { resource: "orders", action: "read" } }],
    });
    await createPod(cluster, ns, `${name}-0`, name);
    const pod = await setPodIp(cluster, ns, `${name}-0`, ip);
    const fired = faults.map(fault => inject(fault(pod)));
    const token = await podToken(cluster, pod);
    const result = await waitUntil(
      `${name}-0 to be granted`,
      async () => {
        const outcome = await runInitFor(server.url, pod, token);
        return outcome.granted ? outcome : undefined;
      },
      30_000,
      100,
    );
    await Promise.all(fired);
    assert.deepEqual(result, { granted: true });
    const current = await cluster.core.readNamespacedPod({ name: `${name}-0`, namespace: ns });
    assert.equal(annotation(current, CLAIM), undefined, "the claim is released");
    // The init client sees the status written at release; the attempt ends after its Event.
    await waitUntil("the Granted Event", async () =>
      (await grantEvents(`${name}-0`)).some(e => e.startsWith("Granted")),
    );
    await waitUntil(
      "the attempt to end",
      async () => !server.grants.isRunning(pod.metadata?.uid ?? ""),
    );
    assert.equal(ClaimedPod.renewing, 0, "no claim is still being renewed");
    return grantEvents(`${name}-0`);
  }

  it("the group cannot be read (not a 404): a counted failure, then granted", async () => {
    const events = await grantThrough("group-read", "127.0.4.10", [
      () => ({
        api: "custom",
        method: "getNamespacedCustomObject",
        when: (r: { plural?: string; name?: string }) =>
          r.plural === "permissiongroups" && r.name === "group-read",
      }),
    ]);
    assert.ok(
      events.some(e => /^GrantFailed: attempt 1 failed \(1 of 3\): .*injected: HTTP 500/.test(e)),
      events.join("\n"),
    );
  });

  it("the grant record cannot be written on the pod: a counted failure, then granted", async () => {
    let patches = 0;
    const events = await grantThrough("record-write", "127.0.4.11", [
      pod => ({
        api: "core",
        method: "patchNamespacedPod",
        // The first patch takes the claim; the second writes the grant record.
        when: (r: { name?: string }) => r.name === pod.metadata?.name && ++patches === 2,
      }),
    ]);
    assert.ok(
      events.some(e => /^GrantFailed: .*injected: HTTP 500 from patchNamespacedPod/.test(e)),
      events.join("\n"),
    );
  });

  it("the breaker ConfigMap cannot be written at success: a counted failure, then granted", async () => {
    const events = await grantThrough("store-write", "127.0.4.12", [
      () => ({
        api: "custom",
        method: "getNamespacedCustomObject",
        when: (r: { plural?: string; name?: string }) =>
          r.plural === "permissiongroups" && r.name === "store-write",
      }),
      pod => ({
        api: "core",
        method: "replaceNamespacedConfigMap",
        // The success write removes the pod's entry (the failure before it made one).
        when: (r: { body?: { data?: Record<string, string> } }) =>
          r.body?.data?.[pod.metadata?.uid ?? ""] === undefined,
      }),
    ]);
    const failed = events.filter(e => e.startsWith("GrantFailed"));
    assert.equal(failed.length, 2, events.join("\n"));
    assert.match(failed.join("\n"), /injected: HTTP 500 from replaceNamespacedConfigMap/);
  });
});
