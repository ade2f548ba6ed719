// Whether a node is protected right now, from the node cache and the zone ConfigMap.
import { K8s, Log, kind } from "pepr";
import {
  parseZoneConfig,
  protectNode,
  votingGroup,
  type Decision,
  type Node,
  type ProtectionContext,
  type ZoneConfig,
} from "../../core/edge";
import { EDGE_ZONE_CONFIGMAP } from "../../core/names";
import { formatErrors } from "../../core/result";
import type { NodeCache } from "./node-cache";
import { isNotFound } from "../../kube/runtime";

export interface EdgeSettings {
  /** Namespace of the edge-health-zone-config ConfigMap (SuperEdge: edge-system). */
  zoneConfigNamespace: string;
  /** Longest a voted-healthy node may stay Unknown and protected, unless the node or zone says otherwise. */
  defaultMaxUnknownMs: number;
  resyncMs: number;
}

export function loadEdgeSettings(env: NodeJS.ProcessEnv = process.env): EdgeSettings {
  return {
    zoneConfigNamespace: env.BULWARK_EDGE_ZONE_NAMESPACE ?? "edge-system",
    defaultMaxUnknownMs: Number(env.BULWARK_EDGE_MAX_UNKNOWN_SECONDS ?? 86_400) * 1000,
    resyncMs: Number(env.BULWARK_EDGE_RESYNC_SECONDS ?? 10) * 1000,
  };
}

export class Protection {
  #zoneConfig: ZoneConfig | undefined;

  constructor(
    readonly nodes: NodeCache,
    readonly settings: EdgeSettings,
  ) {}

  /** Re-reads the zone ConfigMap; a missing one means one group of every edge node. */
  async refreshZoneConfig(): Promise<void> {
    try {
      const map = await K8s(kind.ConfigMap)
        .InNamespace(this.settings.zoneConfigNamespace)
        .Get(EDGE_ZONE_CONFIGMAP);
      const parsed = parseZoneConfig(map.data);
      if (parsed.ok) this.#zoneConfig = parsed.value;
      else
        Log.warn(
          {
            ns: this.settings.zoneConfigNamespace,
            name: EDGE_ZONE_CONFIGMAP,
            reason: formatErrors(parsed.errors),
          },
          "zone config ignored",
        );
    } catch (error) {
      if (isNotFound(error)) this.#zoneConfig = undefined;
      else Log.warn({ err: String(error) }, "zone config read failed; keeping the last one");
    }
  }

  /** What the pure endpoint promotion needs: node lookups from the cache, the same decision rules. */
  context(now = new Date()): ProtectionContext {
    return {
      node: name => this.nodes.get(name) as Node | undefined,
      now,
      zoneConfig: this.#zoneConfig,
      defaultMaxUnknownMs: this.settings.defaultMaxUnknownMs,
      groupSize: node =>
        votingGroup({ node, nodes: this.nodes.all(), config: this.#zoneConfig }).length,
    };
  }

  decide(node: Node, now = new Date()): Decision {
    const groupSize = votingGroup({
      node,
      nodes: this.nodes.all(),
      config: this.#zoneConfig,
    }).length;
    return protectNode({
      node,
      now,
      zoneConfig: this.#zoneConfig,
      defaultMaxUnknownMs: this.settings.defaultMaxUnknownMs,
      groupSize,
    });
  }
}
