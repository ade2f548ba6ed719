// Whether a node is protected right now, from the watch caches and the zone ConfigMap.
import { Log } from "pepr";
import {
  nodeReady,
  parseZoneConfig,
  protectNode,
  slimPod,
  votingGroup,
  type Decision,
  type Node,
  type Pod,
  type PodLookup,
  type ProtectionContext,
  type ZoneConfig,
} from "../../core/edge";
import { EDGE_ZONE_CONFIGMAP } from "../../core/names";
import { CONFIG_MAPS, NODES, PODS, resourcePath } from "../../kube/api-paths";
import { keptAliveApi } from "../../kube/kept-alive-api";
import type { EdgeSettings } from "./settings";
import type { WatchCache } from "../../kube/watch-cache";
import { clusterPods, moduleWatchCache } from "../pepr/watches";

export class Protection {
  #zoneConfig: ZoneConfig | undefined;
  readonly nodes = moduleWatchCache<Node>({ path: resourcePath(NODES), what: "nodes" });
  readonly pods = clusterPods;
  /** SuperEdge's edge-health pods, when its daemons vote (settings.votes). */
  readonly superEdgePods: WatchCache<Pod> | undefined;

  constructor(readonly settings: EdgeSettings) {
    if (settings.votes === "superedge") {
      const { namespace, labels } = settings.superEdgePods;
      this.superEdgePods = moduleWatchCache<Pod>(
        {
          path: resourcePath(PODS, { namespace }),
          what: "SuperEdge edge-health pods",
          labelSelector: Object.entries(labels)
            .map(([key, value]) => `${key}=${value}`)
            .join(","),
        },
        slimPod,
      );
    }
  }

  /** Fills the caches and keeps them current (both admission and watcher processes read them). */
  start(): void {
    this.nodes.start();
    this.pods.start();
    this.superEdgePods?.start();
    void this.refreshZoneConfig();
    setInterval(() => void this.refreshZoneConfig(), this.settings.resyncMs).unref();
  }

  /** Re-reads the zone ConfigMap; a missing one means one group of every edge node. */
  async refreshZoneConfig(): Promise<void> {
    const where = { ns: this.settings.zoneConfigNamespace, name: EDGE_ZONE_CONFIGMAP };
    try {
      const map = await keptAliveApi().getIfExists<{ data?: Record<string, string> }>(
        resourcePath(CONFIG_MAPS, { namespace: where.ns, name: where.name }),
      );
      if (map === undefined) {
        this.#zoneConfig = undefined;
        return;
      }
      // The ConfigMap exists: no data still turns zones on, as SuperEdge reads it.
      const parsed = parseZoneConfig(map.data ?? {});
      if (!parsed.ok) return;
      for (const warning of parsed.value.warnings ?? [])
        Log.warn({ ...where, warning }, "zone config");
      this.#zoneConfig = parsed.value;
    } catch (error) {
      Log.warn({ ...where, err: String(error) }, "zone config read failed; keeping the last one");
    }
  }

  /** Pods from the cache: promotion never reads the API per address. */
  get pod(): PodLookup {
    return (namespace, name) => this.pods.get(name, namespace);
  }

  /** What the pure endpoint functions need: node lookups from the cache, the same decision rules. */
  context(now = new Date()): ProtectionContext {
    return {
      node: name => this.nodes.get(name),
      now,
      zoneConfig: this.#zoneConfig,
      defaultMaxUnknownMs: this.settings.defaultMaxUnknownMs,
      groupSize: node => this.#group(node).length,
      voteRules: this.settings.voteRules,
      superEdgeWitnesses: node => this.#witnesses(node, this.#group(node)),
    };
  }

  /**
   * With SuperEdge's daemons voting: how many of `group` (the node's voting group) besides the
   * node are Ready and run a Ready edge-health pod (core/edge/vote.ts `readSuperEdgeVote`);
   * undefined with Bulwark's daemons.
   */
  #witnesses(node: Node, group: readonly Node[]): number | undefined {
    const pods = this.superEdgePods;
    if (!pods) return undefined;
    const live = new Set(
      pods
        .all()
        .filter(p => p.status?.conditions?.some(c => c.type === "Ready" && c.status === "True"))
        .map(p => p.spec?.nodeName),
    );
    return group.filter(
      peer =>
        peer.metadata?.name !== node.metadata?.name &&
        live.has(peer.metadata?.name) &&
        nodeReady(peer)?.status === "True",
    ).length;
  }

  #group(node: Node): Node[] {
    return votingGroup({ node, nodes: this.nodes.all(), config: this.#zoneConfig });
  }

  decide(node: Node, now = new Date()): Decision {
    const group = this.#group(node);
    return protectNode({
      node,
      now,
      zoneConfig: this.#zoneConfig,
      defaultMaxUnknownMs: this.settings.defaultMaxUnknownMs,
      groupSize: group.length,
      voteRules: this.settings.voteRules,
      superEdgeWitnesses: this.#witnesses(node, group),
    });
  }
}
