import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { PeprMutateRequest, type a } from "pepr";
import { injectPermissionInit, missingGroup, type GroupLookup } from "./admission";
import { loadSettings } from "./settings";
import { ApiCallError } from "../../kube/kept-alive-api";
import { PERMISSION_GROUP_ANNOTATION, PERMISSION_REFUSAL_ANNOTATION } from "../../core/names";

const settings = loadSettings({});
const REFUSAL = PERMISSION_REFUSAL_ANNOTATION;

/** A lookup whose watch holds `held` (ns/name) and whose reads answer with `answer`. */
function lookup(held: string[], answer: () => Promise<unknown>) {
  const reads: string[] = [];
  const groups: GroupLookup = {
    known: { holds: (namespace, name) => held.includes(`${namespace}/${name}`) },
    read: path => {
      reads.push(path);
      return answer();
    },
  };
  return { groups, reads };
}

const found = () => Promise.resolve({ kind: "PermissionGroup" });

function podCreate(
  namespace: string,
  annotations: Record<string, string>,
  spec: Record<string, unknown> = {},
): PeprMutateRequest<a.Pod> {
  const pod = {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "api-0", namespace, annotations },
    spec: { containers: [{ name: "app", image: "app:1" }], ...spec },
  };
  return new PeprMutateRequest<a.Pod>({
    uid: "u",
    kind: { group: "", version: "v1", kind: "Pod" },
    resource: { group: "", version: "v1", resource: "pods" },
    name: "api-0",
    namespace,
    operation: "CREATE",
    userInfo: {},
    object: pod,
  } as never);
}

const initNames = (req: PeprMutateRequest<a.Pod>) =>
  (req.Raw.spec?.initContainers ?? []).map(c => c.name);

describe("injectPermissionInit: the one admission call for a pod naming a group", () => {
  it("injects a pod whose group the watch holds, without reading it", async () => {
    const { groups, reads } = lookup(["shop/db-readers"], found);
    const req = podCreate("shop", { [PERMISSION_GROUP_ANNOTATION]: "db-readers" });
    await injectPermissionInit(settings, groups)(req);
    assert.deepEqual(initNames(req), ["bulwark-init"]);
    assert.equal(req.Raw.metadata?.annotations?.[REFUSAL], undefined);
    assert.deepEqual(reads, []);
  });

  it("reads a group the watch does not hold yet, and injects when it exists", async () => {
    const { groups, reads } = lookup([], found);
    const req = podCreate("shop", { [PERMISSION_GROUP_ANNOTATION]: "db-readers" });
    await injectPermissionInit(settings, groups)(req);
    assert.deepEqual(initNames(req), ["bulwark-init"]);
    assert.deepEqual(reads, [
      "/apis/bulwark.dev/v1alpha1/namespaces/shop/permissiongroups/db-readers",
    ]);
  });

  it("refuses a pod naming a group that does not exist: the reason in the refusal, nothing injected", async () => {
    const { groups } = lookup([], () => Promise.reject(new ApiCallError(404, "not found")));
    const req = podCreate("shop", { [PERMISSION_GROUP_ANNOTATION]: "nope" });
    await injectPermissionInit(settings, groups)(req);
    assert.deepEqual(initNames(req), []);
    assert.equal(req.Raw.metadata?.finalizers, undefined);
    assert.equal(
      req.Raw.metadata?.annotations?.[REFUSAL],
      `Pod shop/api-0: ${PERMISSION_GROUP_ANNOTATION} names PermissionGroup "nope", which does not exist in namespace shop`,
    );
  });

  it("refuses, naming the failure, when the group cannot be read (fail closed)", async () => {
    const { groups } = lookup([], () =>
      Promise.reject(new ApiCallError(503, "the server is currently unable to handle the request")),
    );
    const req = podCreate("shop", { [PERMISSION_GROUP_ANNOTATION]: "db-readers" });
    await injectPermissionInit(settings, groups)(req);
    assert.deepEqual(initNames(req), []);
    assert.match(
      req.Raw.metadata?.annotations?.[REFUSAL] ?? "",
      /^Pod shop\/api-0: permission\.bulwark\.dev\/group: PermissionGroup "db-readers" could not be read \(the server is currently unable to handle the request\); try again$/,
    );
  });

  it("refuses a hostNetwork pod with planInjection's reason, without looking the group up", async () => {
    const { groups, reads } = lookup([], found);
    const req = podCreate(
      "shop",
      { [PERMISSION_GROUP_ANNOTATION]: "db-readers" },
      { hostNetwork: true },
    );
    await injectPermissionInit(settings, groups)(req);
    assert.deepEqual(initNames(req), []);
    assert.match(
      req.Raw.metadata?.annotations?.[REFUSAL] ?? "",
      /cannot be granted to a hostNetwork pod/,
    );
    assert.deepEqual(reads, []);
  });

  it("drops a refusal the creator wrote on a pod it injects (only Bulwark writes it)", async () => {
    const { groups } = lookup(["shop/db-readers"], found);
    const req = podCreate("shop", {
      [PERMISSION_GROUP_ANNOTATION]: "db-readers",
      [REFUSAL]: "copied from somewhere",
    });
    await injectPermissionInit(settings, groups)(req);
    assert.deepEqual(initNames(req), ["bulwark-init"]);
    assert.equal(req.Raw.metadata?.annotations?.[REFUSAL], undefined);
  });

  it("leaves pods in Bulwark's own namespace alone", async () => {
    const { groups, reads } = lookup([], found);
    const req = podCreate("bulwark-system", { [PERMISSION_GROUP_ANNOTATION]: "-bad" });
    const sent = structuredClone(req.Raw);
    await injectPermissionInit(settings, groups)(req);
    assert.deepEqual(req.Raw, sent);
    assert.deepEqual(reads, []);
  });
});

describe("missingGroup", () => {
  it("escapes the namespace and name in the path it reads", async () => {
    const { groups, reads } = lookup([], found);
    assert.equal(await missingGroup("a b", "x?y", groups), undefined);
    assert.deepEqual(reads, ["/apis/bulwark.dev/v1alpha1/namespaces/a%20b/permissiongroups/x%3Fy"]);
  });

  it("fails closed on a name that cannot be one path segment, reading nothing", async () => {
    const { groups, reads } = lookup([], found);
    for (const group of ["x/y", "..", "50%"]) {
      const reason = await missingGroup("shop", group, groups);
      assert.match(
        reason ?? "",
        /PermissionGroup .* could not be read \(permissiongroups: name may/,
      );
    }
    assert.deepEqual(reads, []);
  });
});
