// What the traffic-policy tests share on top of the gateway harness: annotated Ingresses, echoing
// backends on this machine's address, a client that sets any header, and a reader of the admin
// port's Prometheus text.
import { spawn } from "node:child_process";
import { Agent } from "node:http";
import { connect, type Socket } from "node:net";
import type { KubernetesObject } from "@kubernetes/client-node";
import { ask, namedBackend, type Answer, type AskOptions } from "../../../gateway/proxy/testkit";
import { applyOrThrow } from "../../../hack/control-plane/kube";
import { testCluster, testNamespace } from "../../harness/cluster";
import { waitUntil } from "../../harness/wait";
import {
  endpointSlice,
  ensureIngressClass,
  ingress,
  localAddress,
  startGateway,
  waitServed,
  type Backend,
  type RunningGateway,
} from "../gateway/harness";

export const NGINX = "nginx.ingress.kubernetes.io/";

/** Annotations with ingress-nginx's prefix added to each key. */
export function nginx(annotations: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(annotations).map(([k, v]) => [NGINX + k, v]));
}

/** Backend `name`'s endpoint as one more slice of Service "pool" (a Service of several slices). */
export function poolSlice(ns: string, name: string, port: number): KubernetesObject {
  const slice = endpointSlice(ns, "pool", port);
  return { ...slice, metadata: { ...slice.metadata, name: `pool-${name}` } };
}

/** A canary Ingress of `host` "/" to `service`; `annotations` without prefix, canary: "true" added. */
export function canary(
  namespace: string,
  name: string,
  rule: { host: string; service: string; annotations: Record<string, string> },
): KubernetesObject {
  const annotations = nginx({ canary: "true", ...rule.annotations });
  return ingress(namespace, name, { host: rule.host, service: rule.service, annotations });
}

/** A backend answering its name and echoing method, URL and headers as JSON (`?status=N` answers N). */
export async function echoBackend(name: string): Promise<Backend> {
  const backend = await namedBackend(name, localAddress());
  return { name, port: backend.port, close: backend.close };
}

export interface Echo {
  name: string;
  url: string;
  headers: Record<string, string>;
}

/** The echo of an answer from an echoBackend; undefined when the gateway answered itself. */
export function echoOf(answer: Answer): Echo | undefined {
  return answer.headers["x-backend"] === undefined ? undefined : (JSON.parse(answer.body) as Echo);
}

export class Client {
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 8 });

  constructor(private readonly port: number) {}

  send(host: string, path: string, options: AskOptions = {}): Promise<Answer> {
    return ask(this.port, host, path, { agent: this.agent, ...options });
  }

  /** The name of the backend that answered (undefined when the gateway answered itself). */
  async backend(
    host: string,
    path: string,
    headers: Record<string, string> = {},
  ): Promise<string | undefined> {
    return echoOf(await this.send(host, path, { headers }))?.name;
  }

  close(): void {
    this.agent.destroy();
  }
}

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface TrafficNamespace {
  ns: string;
  /** Echo backends by name; each is the Service of that name (its EndpointSlice applied). */
  backends: ReadonlyMap<string, Backend>;
  apply(objects: KubernetesObject[]): Promise<void>;
  close(): Promise<void>;
}

/** A test namespace with the IngressClass and an echo backend (and EndpointSlice) per name. */
export async function openNamespace(prefix: string, names: string[]): Promise<TrafficNamespace> {
  const cluster = testCluster();
  const [ns, removeNamespace] = await testNamespace(cluster, prefix);
  await ensureIngressClass(cluster.kc);
  const backends = new Map<string, Backend>();
  for (const name of names) backends.set(name, await echoBackend(name));
  const apply = (objects: KubernetesObject[]) => applyOrThrow(cluster.kc, objects);
  await apply([...backends.values()].map(b => endpointSlice(ns, b.name, b.port)));
  return {
    ns,
    backends,
    apply,
    close: async () => {
      await Promise.all([...backends.values()].map(b => b.close()));
      await removeNamespace();
    },
  };
}

export interface TrafficGateway {
  gateway: RunningGateway;
  client: Client;
  close(): Promise<void>;
}

/** A gateway process watching `ns`, once `ready.host` is served by backend `ready.backend`. */
export async function openGateway(
  ns: string,
  env: NodeJS.ProcessEnv,
  ready: { host: string; backend: string },
): Promise<TrafficGateway> {
  const { kubeconfigPath } = testCluster();
  const gateway = await startGateway({ kubeconfigPath, namespace: ns, env });
  const client = new Client(gateway.httpPort);
  await waitServed(gateway.httpPort, ready.host, `{"name":"${ready.backend}"`);
  return {
    gateway,
    client,
    close: async () => {
      client.close();
      await gateway.stop();
    },
  };
}

/** Every sample of a Prometheus text exposition. */
export function parseMetrics(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (match === null) continue;
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) {
      labels[pair[1]!] = pair[2]!;
    }
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

/** The sum of the samples named `name` whose labels include `labels`. */
export function total(
  samples: readonly Sample[],
  name: string,
  labels: Record<string, string>,
): number {
  return samples
    .filter(s => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);
}

export async function scrape(adminPort: number): Promise<Sample[]> {
  return parseMetrics(await (await fetch(`http://127.0.0.1:${adminPort}/metrics`)).text());
}

/**
 * A port on this machine where connections never complete: a stopped process listens with a
 * backlog of 1, and once that queue is full the kernel drops further SYNs, so a connect times
 * out. (Addresses off the machine are no use here: the sandbox's network accepts them all.)
 */
export async function startStalledListener(): Promise<{ port: number; close(): void }> {
  const host = JSON.stringify(localAddress());
  const child = spawn(
    process.execPath,
    [
      "-e",
      `const s = require("net").createServer().listen({ port: 0, host: ${host}, backlog: 1 }, () => {
        process.stdout.write(s.address().port + "\\n");
        process.kill(process.pid, "SIGSTOP");
      });`,
    ],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout.once("data", (data: Buffer) => resolve(Number(data.toString().trim())));
    child.once("exit", code => reject(new Error(`stalled listener exited with ${code}`)));
  });
  // Fill the accept queue (backlog + 1 and a spare): the kernel completes backlog + 1 = 2.
  const fillers: Socket[] = [];
  let queued = 0;
  for (let i = 0; i < 4; i++) {
    const socket = connect(port, localAddress()).on("error", () => undefined);
    fillers.push(socket.on("connect", () => queued++));
  }
  await waitUntil("the stalled listener's accept queue to fill", () => queued >= 2, 10_000);
  return {
    port,
    close: () => {
      for (const socket of fillers) socket.destroy();
      child.kill("SIGKILL");
    },
  };
}
