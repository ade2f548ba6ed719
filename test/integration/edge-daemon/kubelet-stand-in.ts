// Kubelets for the edge daemons' kubelet check (no kubelet runs here): one HTTPS server per node
// on the node's own loopback address, with a serving certificate for that address from a CA of
// the test's own, authenticating and authorising as a kubelet with `--anonymous-auth=false
// --authentication-token-webhook --authorization-mode=Webhook` does, against the real API server:
// TokenReview of the bearer token (no token or a refused one → 401), then SubjectAccessReview for
// `get nodes/healthz <node>` and, as kubelets ≥ 1.33 do when that is denied, `nodes/proxy`
// (neither → 403). Reviews are cached for a second (the kubelet caches for minutes) so that a
// changed RBAC rule shows within a check period or two.
//
// The daemons' identity is a real ServiceAccount with a TokenRequest token in a file, allowed
// `get nodes/healthz` by a ClusterRole listing the node names: `deny(name)` removes one node from
// it (its kubelet then answers 403 to everyone), `allow(name)` puts it back.
import {
  AuthenticationV1Api,
  AuthorizationV1Api,
  RbacAuthorizationV1Api,
  type V1ClusterRole,
} from "@kubernetes/client-node";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import https from "node:https";
import { join } from "node:path";
import { createPki, issueCertificate, type Pki } from "../../../hack/control-plane/pki";
import type { TestCluster } from "../../harness/cluster";

export interface StandInKubelets {
  port: number;
  caFile: string;
  tokenFile: string;
  /** What each kubelet answered, by node: status counts. */
  answers: Map<string, Record<number, number>>;
  deny(node: string): Promise<void>;
  allow(node: string): Promise<void>;
  /** Serve a certificate from another CA (a TLS failure for every checker), or the right one. */
  serveForeignCertificate(node: string, foreign: boolean): void;
  close(): Promise<void>;
}

interface Review {
  status: Promise<number>;
  at: number;
}

export async function startStandInKubelets(options: {
  cluster: TestCluster;
  namespace: string;
  names: string[];
  ips: string[];
  dir: string;
  port?: number;
}): Promise<StandInKubelets> {
  const { cluster, namespace, names, ips } = options;
  const port = options.port ?? 10250;
  const dir = join(options.dir, "kubelets");
  mkdirSync(join(dir, "ca"), { recursive: true });
  mkdirSync(join(dir, "foreign"), { recursive: true });
  const pki: Pki = createPki(join(dir, "ca"));
  const foreignPki: Pki = createPki(join(dir, "foreign"));

  const rbac = cluster.kc.makeApiClient(RbacAuthorizationV1Api);
  const authn = cluster.kc.makeApiClient(AuthenticationV1Api);
  const authz = cluster.kc.makeApiClient(AuthorizationV1Api);
  const account = "bulwark-edge-health";
  const roleName = `${namespace}-kubelet-healthz`;
  const allowed = new Set(names);
  const role = (): V1ClusterRole => ({
    metadata: { name: roleName },
    rules: [
      {
        apiGroups: [""],
        resources: ["nodes/healthz"],
        verbs: ["get"],
        resourceNames: [...allowed].sort(),
      },
    ],
  });
  await cluster.core.createNamespacedServiceAccount({
    namespace,
    body: { metadata: { name: account } },
  });
  await rbac.createClusterRole({ body: role() });
  await rbac.createClusterRoleBinding({
    body: {
      metadata: { name: roleName },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: roleName },
      subjects: [{ kind: "ServiceAccount", name: account, namespace }],
    },
  });
  const request = await cluster.core.createNamespacedServiceAccountToken({
    name: account,
    namespace,
    body: { spec: { audiences: [], expirationSeconds: 3600 } },
  });
  const tokenFile = join(dir, "token");
  writeFileSync(tokenFile, request.status?.token ?? "", { mode: 0o600 });

  const cache = new Map<string, Review>();
  /** 200, 401 or 403 for this token on this node, as a kubelet decides (one review in flight). */
  const decide = (node: string, token: string | undefined): Promise<number> => {
    if (!token) return Promise.resolve(401);
    const key = `${node}\n${token}`;
    const hit = cache.get(key);
    if (hit && Date.now() - hit.at < 1000) return hit.status;
    const status = review(node, token);
    cache.set(key, { status, at: Date.now() });
    status.catch(() => cache.delete(key));
    return status;
  };
  const review = async (node: string, token: string): Promise<number> => {
    const review = await authn.createTokenReview({ body: { spec: { token } } });
    let status = 401;
    if (review.status?.authenticated) {
      const user = review.status.user ?? {};
      const may = async (subresource: string): Promise<boolean> => {
        const sar = await authz.createSubjectAccessReview({
          body: {
            spec: {
              user: user.username,
              groups: user.groups,
              uid: user.uid,
              resourceAttributes: { verb: "get", resource: "nodes", subresource, name: node },
            },
          },
        });
        return sar.status?.allowed === true;
      };
      status = (await may("healthz")) || (await may("proxy")) ? 200 : 403;
    }
    return status;
  };

  const answers = new Map<string, Record<number, number>>();
  const contexts = new Map<string, { own: https.ServerOptions; foreign: https.ServerOptions }>();
  const servers = new Map<string, https.Server>();
  for (const [i, node] of names.entries()) {
    const ip = ips[i] ?? "";
    const cert = (p: Pki, name: string): https.ServerOptions => {
      const issued = issueCertificate(p, {
        name,
        commonName: node,
        subjectAltNames: [`IP:${ip}`],
        usage: "serverAuth",
      });
      return { cert: readFileSync(issued.certPath), key: readFileSync(issued.keyPath) };
    };
    const own = cert(pki, `kubelet-${i}`);
    contexts.set(node, { own, foreign: cert(foreignPki, `kubelet-${i}`) });
    const server = https.createServer(own, (req, res) => {
      const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1];
      const answer = (status: number): void => {
        const counts = answers.get(node) ?? {};
        counts[status] = (counts[status] ?? 0) + 1;
        answers.set(node, counts);
        res.statusCode = status;
        res.end(status === 200 ? "ok" : "");
      };
      if (req.url !== "/healthz") return answer(404);
      decide(node, bearer).then(answer, () => answer(500));
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, ip, resolve);
    });
    servers.set(node, server);
  }

  const replaceRole = async (): Promise<void> => {
    await rbac.replaceClusterRole({ name: roleName, body: role() });
  };
  return {
    port,
    caFile: pki.caCertPath,
    tokenFile,
    answers,
    async deny(node) {
      allowed.delete(node);
      await replaceRole();
    },
    async allow(node) {
      allowed.add(node);
      await replaceRole();
    },
    serveForeignCertificate(node, foreign) {
      const c = contexts.get(node);
      const server = servers.get(node);
      if (!c || !server) throw new Error(`no stand-in kubelet for ${node}`);
      server.setSecureContext(foreign ? c.foreign : c.own);
      // Keep-alive connections made with the old certificate would otherwise go on being used.
      server.closeAllConnections();
    },
    async close() {
      for (const server of servers.values()) {
        server.closeAllConnections();
        await new Promise(r => server.close(r));
      }
      await rbac.deleteClusterRoleBinding({ name: roleName }).catch(() => {});
      await rbac.deleteClusterRole({ name: roleName }).catch(() => {});
    },
  };
}
