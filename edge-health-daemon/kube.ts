// The Kubernetes edge (I/O): a watch of Nodes and of the zone ConfigMap, the HMAC key from a
// Secret, and the one write this daemon makes, a merge patch of a Node's vote and its term. The
// watches run on the module's list-watch (kube/watch-cache.ts); each Node is kept with only what
// the daemon reads, on every edge node of the cluster.
import {
  CoreV1Api,
  type KubeConfig,
  PatchStrategy,
  setHeaderOptions,
  type V1ConfigMap,
  type V1Node,
} from "@kubernetes/client-node";
import { readFile } from "node:fs/promises";
import {
  parseZoneConfig,
  DEFAULT_ZONE_CONFIG,
  readTerm,
  voteAnnotations,
  type VoteTerm,
  type ZoneConfig,
} from "../core/edge";
import { EDGE_HEALTH_ANNOTATION, EDGE_ZONE_CONFIGMAP } from "../core/names";
import { ApiClient } from "../kube/api-client";
import { WatchCache } from "../kube/watch-cache";
import type { DaemonLog, VoteOnRecord } from "./daemon";
import { groupOf, internalIp, type Member, type NodeWithAddresses } from "./membership";
import type { Settings } from "./settings";
import { MAX_KEYS } from "./signing";
import type { Decision } from "./tally";
import { CONFIG_MAPS, NODES, resourcePath } from "../kube/api-paths";

export class KubeSource {
  readonly #core: CoreV1Api;
  readonly #api: ApiClient;
  readonly #nodes: WatchCache<V1Node>;
  readonly #configMaps: WatchCache<V1ConfigMap>;
  #zone: ZoneConfig = { ...DEFAULT_ZONE_CONFIG };
  #members: Member[] = [];
  #unaddressed = "";

  constructor(
    readonly kc: KubeConfig,
    readonly settings: Pick<Settings, "nodeName" | "zoneNamespace">,
    readonly log: DaemonLog,
  ) {
    this.#core = kc.makeApiClient(CoreV1Api);
    this.#api = new ApiClient(kc);
    const ns = settings.zoneNamespace;
    const loopLog = (level: "info" | "warn", message: string, fields: object): void =>
      log[level](message, { ...fields });
    this.#nodes = new WatchCache<V1Node>(
      { path: resourcePath(NODES), what: "nodes" },
      { slim: slimNode, log: loopLog },
    );
    this.#configMaps = new WatchCache<V1ConfigMap>(
      {
        path: resourcePath(CONFIG_MAPS, { namespace: ns }),
        what: `configmap ${ns}/${EDGE_ZONE_CONFIGMAP}`,
        fieldSelector: `metadata.name=${EDGE_ZONE_CONFIGMAP}`,
      },
      { log: loopLog },
    );
    this.#nodes.follow(() => this.#recompute());
    this.#configMaps.follow(() => this.#readZone());
  }

  /** Starts both watches; resolves once each has listed (failed lists are retried). */
  async start(): Promise<void> {
    this.#configMaps.start(this.#api);
    this.#nodes.start(this.#api);
    await Promise.all([this.#configMaps.synced(), this.#nodes.synced()]);
    this.#readZone();
  }

  async stop(): Promise<void> {
    await this.#nodes.stop();
    await this.#configMaps.stop();
  }

  #readZone(): void {
    const cm = this.#configMaps.get(EDGE_ZONE_CONFIGMAP, this.settings.zoneNamespace);
    // A ConfigMap without data still turns zones on, as SuperEdge reads it (core/edge/zone.ts).
    const parsed = parseZoneConfig(cm ? (cm.data ?? {}) : undefined);
    if (parsed.ok) {
      this.#zone = parsed.value;
      for (const warning of parsed.value.warnings ?? []) {
        this.log.warn("zone ConfigMap value ignored", { name: EDGE_ZONE_CONFIGMAP, warning });
      }
    } else {
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
      nodes: this.#nodes.all() as NodeWithAddresses[],
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

  onRecord(name: string): VoteOnRecord {
    const node = this.#nodes.get(name);
    return node ? voteOnRecord(node) : {};
  }

  async write(name: string, value: Decision, term: VoteTerm): Promise<void> {
    await this.#core.patchNode(
      { name, body: votePatch(value, term) },
      setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
    );
  }

  /**
   * The shared HMAC keys: the file when set (a mounted Secret), else data.hmackey of the Secret.
   * One key per line, the signing key first (signing.ts explains why several).
   */
  async hmacKeys(settings: Pick<Settings, "hmacKeyFile" | "hmacSecret">): Promise<Buffer[]> {
    if (settings.hmacKeyFile)
      return parseKeys(await readFile(settings.hmacKeyFile), settings.hmacKeyFile);
    const { namespace, name } = settings.hmacSecret;
    const secret = await this.#core.readNamespacedSecret({ namespace, name });
    const data = secret.data?.hmackey;
    if (data === undefined) throw new Error(`Secret ${namespace}/${name}: data.hmackey is missing`);
    return parseKeys(Buffer.from(data, "base64"), `Secret ${namespace}/${name} data.hmackey`);
  }
}

/** A Node's vote and, when it has a readable one, its term. */
/**
 * What the daemon reads of a Node: its name and labels (groups), annotations (votes and their
 * terms) and addresses (whom to probe). Not its images, conditions or managedFields, most of it.
 */
export function slimNode(node: V1Node): V1Node {
  const { name, namespace, resourceVersion, labels, annotations } = node.metadata ?? {};
  return {
    metadata: { name, namespace, resourceVersion, labels, annotations },
    status: { addresses: node.status?.addresses },
  };
}

export function voteOnRecord(node: V1Node): VoteOnRecord {
  const value = node.metadata?.annotations?.[EDGE_HEALTH_ANNOTATION];
  const read = readTerm(node);
  return {
    ...(value === undefined ? {} : { value }),
    ...("term" in read ? { term: read.term } : {}),
  };
}

/** The merge patch of a vote: its value and its term together, so they never part. */
export function votePatch(value: Decision, term: VoteTerm): V1Node {
  return { metadata: { annotations: voteAnnotations(value, term) } };
}

/**
 * The keys in a key file or Secret value: one per line (a trailing newline, as `echo` writes, is
 * not part of a key), newest first, at most MAX_KEYS − 1 so that one retired key still fits.
 * Refuses keys too short to mean anything (SuperEdge shipped a 16-character default).
 */
export function parseKeys(raw: Buffer, where: string): Buffer[] {
  const keys: Buffer[] = [];
  let start = 0;
  while (start <= raw.length) {
    let end = raw.indexOf(0x0a, start);
    if (end === -1) end = raw.length;
    let last = end;
    if (last > start && raw[last - 1] === 0x0d) last--;
    if (last > start) keys.push(raw.subarray(start, last));
    start = end + 1;
  }
  if (keys.length === 0) throw new Error(`${where}: no HMAC key`);
  const short = keys.findIndex(k => k.length < 16);
  if (short !== -1) {
    throw new Error(`${where}: line ${short + 1}: the HMAC key must be at least 16 bytes`);
  }
  if (keys.length > MAX_KEYS - 1) {
    throw new Error(`${where}: at most ${MAX_KEYS - 1} keys (one per line), found ${keys.length}`);
  }
  return keys;
}
