// The public surface of core/edge: issue 8's pure logic (vote, zones, the protection decision,
// taint and endpoint patches), used by the edge-health capability's webhooks and reconciler.
export {
  UNREACHABLE_TAINT_KEY,
  NODE_READY,
  POD_READY,
  timeMs,
  kubeTimeString,
  nodeReady,
} from "./types";
export type {
  KubeTime,
  Meta,
  Taint,
  NodeCondition,
  Node,
  PodCondition,
  ContainerStatus,
  Pod,
  ObjectRef,
  EndpointAddress,
  EndpointSubset,
  Endpoints,
  EndpointConditions,
  SliceEndpoint,
  EndpointSlice,
  JsonPatchOp,
} from "./types";
export {
  readVote,
  nodeVote,
  readTerm,
  termProblem,
  voteAnnotations,
  DEFAULT_VOTE_RULES,
} from "./vote";
export type { Vote, VoteReading, VoteRules, VoteTerm } from "./vote";
export {
  CONTROL_PLANE_LABELS,
  MAX_UNKNOWN_SECONDS_LIMIT,
  DEFAULT_ZONE_CONFIG,
  secondsStringSchema,
  parseZoneConfig,
  votingGroup,
} from "./zone";
export type { ZoneConfig } from "./zone";
export { autonomyLimit, protectNode, protectionByName } from "./decision";
export type { Decision, DecisionRule, ProtectInput, ProtectionContext } from "./decision";
export { stripUnreachableNoExecute, taintRemovalPatch } from "./taint";
export { podIneligibility, promotionVerdict, slimPod } from "./promotion";
export type { PodLookup, ProtectionLookup, Verdict } from "./promotion";
export { promoteEndpoints, settleEndpoints, endpointsPatch } from "./endpoints";
export type { MovedAddress, SkippedAddress, EndpointsPromotion } from "./endpoints";
export { promoteEndpointSlice, settleEndpointSlice, endpointSlicePatch } from "./endpointslices";
export type {
  PromotedEndpoint,
  RestoredEndpoint,
  SkippedEndpoint,
  SlicePromotion,
} from "./endpointslices";
export { keptOf, keptKey } from "./kept";
export { autonomySchema } from "./autonomy";
export { autonomyCondition, REASONS } from "./autonomy-condition";
export type { AutonomySetting } from "./autonomy";
