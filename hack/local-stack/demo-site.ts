// The demo site of `npm start`: two small HTTP backends in this process (stable and canary) on
// this machine's own address (the API server refuses loopback addresses in EndpointSlices), and
// in namespace `demo` their EndpointSlices, the Ingress `demo` for demo.bulwark.test, a canary
// Ingress that takes requests carrying `X-Canary: always`, and the Ingress `secure` for the TLS
// host secure.bulwark.test with a self-signed certificate. So
// `curl -H 'Host: demo.bulwark.test' http://127.0.0.1:8080/` answers as soon as the stack is up.
import { createServer, type Server } from "node:http";
import type { KubernetesObject } from "@kubernetes/client-node";
import { applyOrThrow, loadKubeConfig } from "../control-plane/kube";
import { makeCertificate, tlsSecret } from "../../test/fixtures/certificates";
import { endpointSlice, ingress } from "../../test/integration/gateway/harness";
import { NGINX_ANNOTATION_PREFIX } from "../../core/names";
import { machineAddress } from "./gateway";
import type { LocalWorkloadContext } from "./workload";

export const DEMO_NAMESPACE = "demo";
export const DEMO_HOST = "demo.bulwark.test";
export const SECURE_HOST = "secure.bulwark.test";

/** What a demo backend answers: which backend, for which host and path. */
export function demoAnswer(backend: string, host: string | undefined, path: string): string {
  return `Hello from the ${backend} backend of ${host ?? "?"} (path ${path})\n`;
}

async function listen(name: string): Promise<{ server: Server; port: number }> {
  const server = createServer((req, res) => {
    const body = demoAnswer(name, req.headers.host, req.url ?? "/");
    res.writeHead(200, { "content-type": "text/plain" }).end(body);
  });
  await new Promise<void>(resolve => server.listen(0, machineAddress(), resolve));
  const address = server.address();
  return { server, port: typeof address === "object" && address ? address.port : 0 };
}

/** The demo objects for backends listening on `ports` (pure: the test checks what they say). */
export function demoObjects(ports: { stable: number; canary: number }): KubernetesObject[] {
  const canary = { [`${NGINX_ANNOTATION_PREFIX}canary`]: "true" };
  return [
    { apiVersion: "v1", kind: "Namespace", metadata: { name: DEMO_NAMESPACE } },
    endpointSlice(DEMO_NAMESPACE, "demo", ports.stable),
    endpointSlice(DEMO_NAMESPACE, "demo-canary", ports.canary),
    tlsSecret(
      DEMO_NAMESPACE,
      "secure-tls",
      makeCertificate({ key: "ecdsa", dnsNames: [SECURE_HOST] }),
    ),
    ingress(DEMO_NAMESPACE, "demo", { host: DEMO_HOST, service: "demo" }),
    ingress(DEMO_NAMESPACE, "demo-canary", {
      host: DEMO_HOST,
      service: "demo-canary",
      annotations: { ...canary, [`${NGINX_ANNOTATION_PREFIX}canary-by-header`]: "X-Canary" },
    }),
    ingress(DEMO_NAMESPACE, "secure", {
      host: SECURE_HOST,
      service: "demo",
      tlsSecrets: ["secure-tls"],
    }),
  ];
}

export async function startDemoSite(context: LocalWorkloadContext) {
  const stable = await listen("stable");
  const canary = await listen("canary");
  await applyOrThrow(
    loadKubeConfig(context.kubeconfigPath),
    demoObjects({ stable: stable.port, canary: canary.port }),
  );
  const env = { ...process.env, ...context.env };
  const http = env.BULWARK_HTTP_PORT ?? "8080";
  const https = env.BULWARK_HTTPS_PORT ?? "8443";
  context.log(`demo site: Ingresses demo, demo-canary and secure in namespace ${DEMO_NAMESPACE}`);
  const close = (server: Server) =>
    new Promise<void>(resolve => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return {
    processes: [],
    stop: async () => {
      await close(stable.server);
      await close(canary.server);
    },
    lines: [
      `  demo site      Ingress demo/demo: curl -H 'Host: ${DEMO_HOST}' http://127.0.0.1:${http}/  (canary with -H 'X-Canary: always')`,
      `                 TLS host ${SECURE_HOST}: curl -k --resolve ${SECURE_HOST}:${https}:127.0.0.1 https://${SECURE_HOST}:${https}/`,
      `                 backends in this process on ${machineAddress()}:${stable.port} (stable) and :${canary.port} (canary)`,
    ],
  };
}
