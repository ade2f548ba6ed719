// The permission endpoint the Pepr module is pointed at in tests (BULWARK_PERMISSION_SERVER): it
// records every revoke call and can be told to fail the next N calls for one namespace, as a real
// authorization API sometimes does. A test that runs a real permission server forwards its
// namespace's revokes to it (POST /_test/forward {namespace, url}); the real server's answer is
// then what Pepr gets.
import express from "express";
import type { Server } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { KubernetesObject } from "@kubernetes/client-node";
import { applyOrThrow, loadKubeConfig } from "../../hack/control-plane/kube";

/**
 * Where the Pepr module reads the endpoint's CA (BULWARK_PERMISSION_CA_SECRET), as it reads the
 * permission server's serving Secret in a cluster: its ca.crt.
 */
export const ENDPOINT_CA_SECRET = {
  namespace: "bulwark-system",
  name: "bulwark-permission-server-tls",
};

/** Writes the CA Secret (and its namespace) the module is told to read. */
export async function publishEndpointCa(kubeconfigPath: string, caPem: string): Promise<void> {
  const objects: KubernetesObject[] = [
    { apiVersion: "v1", kind: "Namespace", metadata: { name: ENDPOINT_CA_SECRET.namespace } },
    {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { ...ENDPOINT_CA_SECRET },
      data: { "ca.crt": Buffer.from(caPem).toString("base64") },
    } as KubernetesObject,
  ];
  await applyOrThrow(loadKubeConfig(kubeconfigPath), objects);
}

export interface RevokeCall {
  uid: string;
  namespace?: string;
  pod?: string;
  /** Whatever else the body held (the module sends the pod's namespace, name and UID only). */
  [other: string]: unknown;
  answeredStatus: number;
  /** Whether the call carried a bearer token (the watcher's service-account token). */
  authenticated: boolean;
  /** Where it was forwarded, if anywhere. */
  forwardedTo?: string;
}

export interface PermissionEndpoint {
  /** Plain HTTP: the test controls (/_test/*) and, without TLS, the revoke API. */
  url: string;
  /** HTTPS with the given certificate (the same app): what the Pepr module is pointed at. */
  tlsUrl: string | undefined;
  close: () => Promise<void>;
}

/** Tells the endpoint to forward revokes of pods in `namespace` to `url` (a real server); null stops it. */
export async function forwardRevokes(
  endpointUrl: string,
  namespace: string,
  url: string | null,
): Promise<void> {
  const response = await fetch(`${endpointUrl}/_test/forward`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ namespace, url }),
  });
  if (!response.ok) throw new Error(`forward setup failed: ${response.status}`);
}

async function forward(
  target: string,
  body: unknown,
  authorization: string | undefined,
): Promise<{ status: number; body: unknown }> {
  try {
    const response = await fetch(`${target}/v1/revoke`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        ...(authorization ? { authorization } : {}),
      },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON: pass the text on
    }
    return { status: response.status, body: parsed };
  } catch (error) {
    return { status: 502, body: { error: `forward to ${target} failed: ${String(error)}` } };
  }
}

export async function startPermissionEndpoint(tls?: {
  cert: string;
  key: string;
}): Promise<PermissionEndpoint> {
  const calls: RevokeCall[] = [];
  const forwards = new Map<string, string>();
  // Injected failures per namespace: a test's failures are not used up by revoke calls for other
  // tests' pods (the sweep revokes leftovers from every namespace).
  const failNext = new Map<string, number>();
  const app = express();
  app.use(express.json());
  app.post("/v1/revoke", async (req, res) => {
    const authorization = req.headers.authorization;
    const base = { ...req.body, authenticated: /^Bearer \S+/.test(authorization ?? "") };
    const namespace = String(req.body?.namespace ?? "");
    const failures = failNext.get(namespace) ?? 0;
    const target = forwards.get(namespace);
    if (failures === 0 && target) {
      const answer = await forward(target, req.body, authorization);
      calls.push({ ...base, answeredStatus: answer.status, forwardedTo: target });
      res.status(answer.status).json(answer.body);
      return;
    }
    const status = failures > 0 ? 503 : 200;
    if (failures > 0) failNext.set(namespace, failures - 1);
    calls.push({ ...base, answeredStatus: status });
    res
      .status(status)
      .json(status === 200 ? { revoked: true } : { error: "authorization API unavailable" });
  });
  app.post("/_test/fail", (req, res) => {
    const namespace = String(req.query.namespace ?? "");
    if (!namespace) {
      res.status(400).json({ error: "namespace: is required" });
      return;
    }
    failNext.set(namespace, Number(req.query.count ?? 1));
    res.json({ namespace, failNext: failNext.get(namespace) });
  });
  app.post("/_test/forward", (req, res) => {
    const { namespace, url } = (req.body ?? {}) as { namespace?: string; url?: string | null };
    if (!namespace) {
      res.status(400).json({ error: "namespace: is required" });
      return;
    }
    if (url) forwards.set(namespace, url.replace(/\/+$/, ""));
    else forwards.delete(namespace);
    res.json({ forwards: Object.fromEntries(forwards) });
  });
  app.get("/_test/calls", (_req, res) => res.json(calls));
  const server: Server = await new Promise(resolve => {
    const s = app.listen(0, "127.0.0.1", () => resolve(s));
  });
  const secure =
    tls === undefined
      ? undefined
      : await new Promise<Server>(resolve => {
          const s = createHttpsServer(tls, app).listen(0, "127.0.0.1", () => resolve(s));
        });
  const portOf = (s: Server) => {
    const address = s.address();
    return typeof address === "object" && address ? address.port : 0;
  };
  const close = (s: Server | undefined) =>
    new Promise<void>(r => (s === undefined ? r() : s.close(() => r())));
  return {
    url: `http://127.0.0.1:${portOf(server)}`,
    tlsUrl: secure === undefined ? undefined : `https://127.0.0.1:${portOf(secure)}`,
    close: async () => {
      await Promise.all([close(server), close(secure)]);
    },
  };
}
