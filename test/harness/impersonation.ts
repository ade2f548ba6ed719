// Acting as another user against the test cluster: the admin's credentials with Impersonate-User,
// and the namespace Role (with its binding) that gives such a user its rights.
import { request } from "node:https";
import type { KubernetesObject, V1PolicyRule } from "@kubernetes/client-node";
import type { TestCluster } from "./cluster";

/** One API call as `user`, returning the status and the body (errors are answers, not throws). */
export async function asUser(
  cluster: Pick<TestCluster, "kc" | "server">,
  user: string,
  call: { method: string; path: string; body?: unknown; contentType?: string },
): Promise<{ status: number; body: string }> {
  const options: { method: string; headers: Record<string, string> } = {
    method: call.method,
    headers: {
      "Impersonate-User": user,
      "content-type": call.contentType ?? "application/json",
    },
  };
  await cluster.kc.applyToHTTPSOptions(options as never);
  return new Promise((resolve, reject) => {
    const req = request(`${cluster.server}${call.path}`, options, res => {
      let text = "";
      res.on("data", chunk => (text += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on("error", reject);
    req.end(call.body === undefined ? undefined : JSON.stringify(call.body));
  });
}

/** A Role named `name` in `namespace` with `rules`, bound to `user`. */
export function userRole(
  namespace: string,
  name: string,
  user: string,
  rules: V1PolicyRule[],
): KubernetesObject[] {
  const metadata = { name, namespace };
  return [
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "Role",
      metadata,
      rules,
    } as KubernetesObject,
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "RoleBinding",
      metadata,
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name },
      subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: user }],
    } as KubernetesObject,
  ];
}
