import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { podProblem } from "./checks";
import { planGrants, CMDB_PERMISSION } from "../grants/plan";

const POD = {
  metadata: {
    namespace: "shop",
    name: "web-1",
    uid: "u1",
    annotations: { "permission.bulwark.dev/group": "readers" },
    finalizers: ["stke.io/podpermission-protection"],
  },
  spec: {},
  status: { podIP: "10.0.0.1" },
};

describe("podProblem", () => {
  const cases: [string, object, { uid: string; ip?: string }, number | undefined, boolean?][] = [
    ["a pod ready to grant", POD, { uid: "u1", ip: "10.0.0.1" }, undefined],
    ["another UID", POD, { uid: "u2" }, 403, true],
    ["no IP yet", { ...POD, status: {} }, { uid: "u1" }, 409, false],
    ["a different IP than the client reports", POD, { uid: "u1", ip: "10.0.0.9" }, 409, false],
    [
      "no finalizer",
      { ...POD, metadata: { ...POD.metadata, finalizers: [] } },
      { uid: "u1" },
      412,
      true,
    ],
    [
      "no group",
      { ...POD, metadata: { ...POD.metadata, annotations: {} } },
      { uid: "u1" },
      412,
      true,
    ],
    ["hostNetwork", { ...POD, spec: { hostNetwork: true } }, { uid: "u1" }, 412, true],
    [
      "being deleted",
      { ...POD, metadata: { ...POD.metadata, deletionTimestamp: "2026-01-01T00:00:00Z" } },
      { uid: "u1" },
      412,
      true,
    ],
  ];
  for (const [what, pod, asked, status, definitive] of cases) {
    it(`given ${what}, answers ${status ?? "no problem"}`, () => {
      const problem = podProblem(pod, asked);
      assert.equal(problem?.status, status);
      if (problem) assert.equal(problem.definitive, definitive);
    });
  }
});

describe("planGrants", () => {
  const group = {
    registerWithCmdb: true,
    permissions: [
      {
        name: "orders",
        provider: "authz",
        type: "http" as const,
        params: { resource: "orders", action: "read" as const },
      },
    ],
  };
  it("puts the CMDB registration first when the group asks for it", () => {
    const { planned, problem } = planGrants(group, {
      provider: "cmdb",
      params: { resource: "cmdb/pods", action: "write" },
    });
    assert.equal(problem, undefined);
    assert.deepEqual(
      planned.map(p => [p.name, p.provider]),
      [
        [CMDB_PERMISSION, "cmdb"],
        ["orders", "authz"],
      ],
    );
  });
  it("reports a group that asks for CMDB registration when none is configured", () => {
    assert.match(planGrants(group, undefined).problem ?? "", /BULWARK_CMDB_PROVIDER/);
  });
  it("leaves the registration out when the group does not ask", () => {
    assert.deepEqual(
      planGrants({ ...group, registerWithCmdb: false }, undefined).planned.map(p => p.name),
      ["orders"],
    );
  });
});
