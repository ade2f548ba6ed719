// The Kubernetes edge (I/O): a watch of Nodes and of the zone ConfigMap, the HMAC key from a
// Secret, and the one write this daemon makes, a merge patch of one Node annotation.
import {
  CoreV1Api,
  KubeConfig,
  ListWatch,
  PatchStrategy,
  Watch,
  setHeaderOptions,
  type KubernetesObject,
  type V1ConfigMap,
  type V1Node,
} from "@kubernetes/client-node";
import { readFile } from "node:fs/promises";
import { parseZoneConfig, DEFAULT_ZONE_CONFIG, type ZoneConfig } from "../core/edge";
import { EDGE_HEALTH_ANNOTATION, EDGE_ZONE_CONFIGMAP } from "../core/names";
import type { DaemonLog } from "./daemon";
import { groupOf, internalIp, type Member, type NodeWithAddresses } from "./membership";
import type { Settings } from "./settings";
import type { Decision } from "./tally";

export function kubeConfig(path: string | undefined): KubeConfig {
  const kc = new KubeConfig();
  if (path) kc.loadFromFile(path);
  else kc.loadFromCluster();
  return kc;
}

/** Starts an informer and restarts it after an error (client-node's stop on error). */
function keepWatching<T extends KubernetesObject>(
  informer: ListWatch<T>,
  what: string,
  log: DaemonLog,
): void {
  informer.on("error", (error: unknown) => {
    log.warn("watch ended; restarting", { what, error: String(error) });
    setTimeout(() => void informer.start().catch(() => {}), 1000).unref();
  });
}

export class KubeSource {
  readonly #core: CoreV1Api;
  readonly #nodes: ListWatch<V1Node>;
  readonly #configMaps: ListWatch<V1ConfigMap>;
  #zone: ZoneConfig = { ...DEFAULT_ZONE_CONFIG };
  #members: Member[] = [];
  #unaddressed = "";

  constructor(
    readonly kc: KubeConfig,
    readonly settings: Pick<Settings, "nodeName" | "zoneNamespace">,
    readonly log: DaemonLog,
  ) {
    this.#core = kc.makeApiClient(CoreV1Api);
    const watch = new Watch(kc);
    const ns = settings.zoneNamespace;
    const fieldSelector = `metadata.name=${EDGE_ZONE_CONFIGMAP}`;
    this.#nodes = new ListWatch("/api/v1/nodes", watch, () => this.#core.listNode(), false);
    this.#configMaps = new ListWatch(
      `/api/v1/namespaces/${ns}/configmaps`,
      watch,
      () => this.#core.listNamespacedConfigMap({ namespace: ns, fieldSelector }),
      false,
      undefined,
      fieldSelector,
    );
    keepWatching(this.#nodes, "nodes", log);
    keepWatching(this.#configMaps, `configmap ${ns}/${EDGE_ZONE_CONFIGMAP}`, log);
    for (const verb of ["add", "update", "delete"] as const) {
      this.#nodes.on(verb, () => this.#recompute());
      this.#configMaps.on(verb, () => this.#readZone());
    }
  }

  async start(): Promise<void> {
    await this.#configMaps.start();
    await this.#nodes.start();
    this.#readZone();
  }

  async stop(): Promise<void> {
    await this.#nodes.stop();
    await this.#configMaps.stop();
  }

  #readZone(): void {
    const cm = this.#configMaps.get(EDGE_ZONE_CONFIGMAP, this.settings.zoneNamespace);
    const parsed = parseZoneConfig(cm?.data);
    if (parsed.ok) this.#zone = parsed.value;
    else {
      // A bad edit keeps the last good configuration rather than reshaping every group.
      this.log.warn("zone ConfigMap invalid; keeping the last good configuration", {
        namespace: this.settings.zoneNamespace,
        name: EDGE_ZONE_CONFIGMAP,
        errors: parsed.errors,
      });
    }
    this.#recompute();
  }

  #recompute(): void {
    const group = groupOf({
      self: this.settings.nodeName,
      nodes: this.#nodes.list() as NodeWithAddresses[],
      config: this.#zone,
    });
    this.#members = group.members;
    const unaddressed = group.unaddressed.join(",");
    if (unaddressed && unaddressed !== this.#unaddressed) {
      this.log.warn("group nodes without an InternalIP are left out", { nodes: group.unaddressed });
    }
    this.#unaddressed = unaddressed;
  }

  members(): readonly Member[] {
    return this.#members;
  }

  /** This node's InternalIP, once the watch has it. */
  selfIp(): string | undefined {
    const node = this.#nodes.get(this.settings.nodeName);
    return node ? internalIp(node as NodeWithAddresses) : undefined;
  }

  onRecord(name: string): string | undefined {
    return this.#nodes.get(name)?.metadata?.annotations?.[EDGE_HEALTH_ANNOTATION];
  }

  async write(name: string, value: Decision): Promise<void> {
    await this.#core.patchNode(
      { name, body: { metadata: { annotations: { [EDGE_HEALTH_ANNOTATION]: value } } } },
      setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
    );
  }

  /** The shared HMAC key: the file when set (a mounted Secret), else data.hmackey of the Secret. */
  async hmacKey(settings: Pick<Settings, "hmacKeyFile" | "hmacSecret">): Promise<Buffer> {
    if (settings.hmacKeyFile)
      return checkedKey(await readFile(settings.hmacKeyFile), settings.hmacKeyFile);
    const { namespace, name } = settings.hmacSecret;
    const secret = await this.#core.readNamespacedSecret({ namespace, name });
    const data = secret.data?.hmackey;
    if (data === undefined) throw new Error(`Secret ${namespace}/${name}: data.hmackey is missing`);
    return checkedKey(Buffer.from(data, "base64"), `Secret ${namespace}/${name} data.hmackey`);
  }
}

/** Refuses keys too short to mean anything (SuperEdge shipped a 16-character default). */
export function checkedKey(key: Buffer, where: string): Buffer {
  // A file written with `echo` ends in a newline that is not part of the key.
  let end = key.length;
  while (end > 0 && (key[end - 1] === 0x0a || key[end - 1] === 0x0d)) end--;
  const trimmed = key.subarray(0, end);
  if (trimmed.length < 16) throw new Error(`${where}: the HMAC key must be at least 16 bytes`);
  return trimmed;
}
