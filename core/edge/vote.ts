// The peers' verdict on a node, as the edge-health daemons leave it on the Node object.
//
// Two writers exist: Bulwark's daemon writes `superedgehealth/node-health: "true" | "false"`, and
// SuperEdge's own daemon writes `nodeunhealth: "yes"` on an unhealthy majority and deletes it on a
// healthy one. Precedence: `nodeunhealth` wins. It is only ever written on an unhealthy majority,
// so its presence is a positive "evict" signal, and when the two disagree the safe mistake is a
// normal eviction (Kubernetes' own behaviour), not keeping a possibly dead node's pods. Like
// SuperEdge's webhook, any value of `nodeunhealth` counts; a value other than "yes" is reported.
import { EDGE_HEALTH_ANNOTATION, EDGE_UNHEALTHY_ANNOTATION } from "../names";
import type { Node } from "./types";

export type Vote = "healthy" | "unhealthy" | "none";

export interface VoteReading {
  vote: Vote;
  /** Unexpected annotation values, for a log line or an Event; the vote is still decided. */
  warnings: string[];
}

/** The vote on `node`, with anything odd about the annotations that carry it. */
export function readVote(node: Node): VoteReading {
  const annotations = node.metadata?.annotations ?? {};
  const warnings: string[] = [];
  const unhealthy = annotations[EDGE_UNHEALTHY_ANNOTATION];
  const health = annotations[EDGE_HEALTH_ANNOTATION];
  if (unhealthy !== undefined) {
    if (unhealthy !== "yes") {
      warnings.push(
        `metadata.annotations["${EDGE_UNHEALTHY_ANNOTATION}"]: expected "yes", got ${JSON.stringify(unhealthy)}; read as unhealthy`,
      );
    }
    if (health === "true") {
      warnings.push(
        `metadata.annotations: "${EDGE_UNHEALTHY_ANNOTATION}" and "${EDGE_HEALTH_ANNOTATION}": "true" disagree; read as unhealthy`,
      );
    }
    return { vote: "unhealthy", warnings };
  }
  if (health === "true") return { vote: "healthy", warnings };
  if (health === "false") return { vote: "unhealthy", warnings };
  if (health !== undefined) {
    // A typo ("True", "yes") must not protect a node: read it as no vote, and say so.
    warnings.push(
      `metadata.annotations["${EDGE_HEALTH_ANNOTATION}"]: expected "true" or "false", got ${JSON.stringify(health)}; read as no vote`,
    );
  }
  return { vote: "none", warnings };
}

/** The vote on `node`: "healthy", "unhealthy", or "none" when no usable vote is recorded. */
export function nodeVote(node: Node): Vote {
  return readVote(node).vote;
}
