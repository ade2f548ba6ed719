// IngressCheckSum and SecretCheckSum (tengine.taobao.org/v1): Tengine-Ingress's spec, unchanged,
// plus Bulwark's optional `mode` and a status that says whether the cluster matches.
import { z } from "zod";
import type { Condition } from "../conditions";
import { customResourceDefinition } from "../crd";
import { CHECKSUM_GROUP } from "../names";

export const CHECKSUM_VERSION = "v1";
export const CONSISTENT_CONDITION = "Consistent";
/** Differing IDs listed in status, at most; the counts are always complete. */
export const STATUS_ID_CAP = 20;

export const checksumKinds = {
  ingress: {
    kind: "IngressCheckSum",
    plural: "ingresschecksums",
    singular: "ingresschecksum",
    shortName: "ingcs",
  },
  secret: {
    kind: "SecretCheckSum",
    plural: "secretchecksums",
    singular: "secretchecksum",
    shortName: "seccs",
  },
} as const;
export type ChecksumKind = keyof typeof checksumKinds;

const DIGITS = { tengine: 32, content: 64 } as const;

export const checksumSpecSchema = z
  .object({
    timestamp: z.string().min(1),
    checksum: z
      .string()
      .regex(
        /^([0-9a-f]{32}|[0-9a-f]{64})$/,
        "must be lowercase hex: 32 digits (MD5, tengine mode) or 64 (SHA-256, content mode)",
      )
      .optional(),
    ids: z.array(z.string()).optional(),
    // Objects without a mode come from Tengine producers.
    mode: z.enum(["tengine", "content"]).default("tengine"),
    // Checked by core/checksum/signature.ts, which names what is wrong with it.
    signature: z.unknown().optional(),
  })
  .superRefine((spec, ctx) => {
    // A content checksum of the old MD5 form never verifies: the publisher must publish again.
    if (spec.checksum === undefined || spec.checksum.length === DIGITS[spec.mode]) return;
    const message =
      spec.mode === "content"
        ? "must be 64 hex digits (SHA-256) in content mode; an MD5 one is of the old form: publish again"
        : "must be 32 hex digits (MD5) in tengine mode";
    ctx.addIssue({ code: "custom", path: ["checksum"], message });
  });

/** metav1.Condition (core/conditions.ts). */
export type ChecksumCondition = Condition;

export interface ChecksumStatus {
  observedGeneration?: number;
  /** The checksum of the cluster's current objects in this object's mode. */
  observedChecksum?: string;
  objectCount?: number;
  publishedCount?: number;
  missingCount?: number;
  unexpectedCount?: number;
  /** Published IDs the cluster no longer has (capped). */
  missing?: string[];
  /** IDs in the cluster the publisher did not attest (capped). */
  unexpected?: string[];
  /** Which objects differ, in one short line (kubectl's Differs column). */
  differing?: string;
  /** The guard mode the gateway runs in for this kind: off, observe or enforce. */
  enforcement?: string;
  conditions?: ChecksumCondition[];
}

const idList = { type: "array", items: { type: "string" }, "x-kubernetes-list-type": "atomic" };

function statusSchema() {
  return {
    type: "object",
    properties: {
      observedGeneration: { type: "integer", format: "int64" },
      observedChecksum: { type: "string" },
      objectCount: { type: "integer" },
      publishedCount: { type: "integer" },
      missingCount: { type: "integer" },
      unexpectedCount: { type: "integer" },
      missing: { ...idList, maxItems: STATUS_ID_CAP },
      unexpected: { ...idList, maxItems: STATUS_ID_CAP },
      differing: { type: "string" },
      enforcement: { type: "string", enum: ["off", "observe", "enforce"] },
      conditions: {
        type: "array",
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["type"],
        items: {
          type: "object",
          required: ["type", "status", "reason", "message", "lastTransitionTime"],
          properties: {
            type: { type: "string" },
            status: { type: "string", enum: ["True", "False", "Unknown"] },
            reason: { type: "string" },
            message: { type: "string" },
            lastTransitionTime: { type: "string", format: "date-time" },
            observedGeneration: { type: "integer", format: "int64" },
          },
        },
      },
    },
  };
}

export function checksumCrd(kind: ChecksumKind) {
  const names = checksumKinds[kind];
  return customResourceDefinition({
    group: CHECKSUM_GROUP,
    version: CHECKSUM_VERSION,
    scope: "Namespaced",
    names,
    description: `${names.kind}: the checksum a publisher attests for the cluster's ${kind === "ingress" ? "Ingress" : "TLS Secret"} objects (Tengine-Ingress compatible).`,
    printerColumns: [
      { name: "Mode", type: "string", jsonPath: ".spec.mode" },
      {
        name: "Consistent",
        type: "string",
        jsonPath: `.status.conditions[?(@.type=="${CONSISTENT_CONDITION}")].status`,
      },
      {
        name: "Reason",
        type: "string",
        jsonPath: `.status.conditions[?(@.type=="${CONSISTENT_CONDITION}")].reason`,
      },
      { name: "Guard", type: "string", jsonPath: ".status.enforcement" },
      { name: "Differs", type: "string", jsonPath: ".status.differing" },
      { name: "Missing", type: "integer", jsonPath: ".status.missingCount", priority: 1 },
      {
        name: "Unexpected",
        type: "integer",
        jsonPath: ".status.unexpectedCount",
        priority: 1,
      },
      { name: "Checksum", type: "string", jsonPath: ".spec.checksum", priority: 1 },
      { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" },
    ],
    spec: {
      type: "object",
      required: ["timestamp"],
      properties: {
        timestamp: {
          type: "string",
          format: "date-time",
          description: "When the checksum was computed.",
        },
        checksum: {
          type: "string",
          pattern: "^([0-9a-f]{32}|[0-9a-f]{64})$",
          description:
            "Digest (lowercase hex) of the sorted IDs joined by ',': MD5 in tengine mode, SHA-256 in content mode.",
        },
        // Tengine declares a set, but its formula keeps duplicate IDs: atomic keeps them.
        ids: { ...idList, description: "The IDs that went into the checksum." },
        mode: {
          type: "string",
          enum: ["tengine", "content"],
          default: "tengine",
          description:
            "tengine: <N>-<version>[-<cert sha1>] IDs; content: <ns>/<name>@<sha256 of canonical JSON>.",
        },
        signature: {
          type: "object",
          required: ["keyId", "value"],
          description:
            "Bulwark's optional Ed25519 signature (bulwark checksum publish --sign-key) over kind, mode, checksum, timestamp and the IDs' digest; required where the guard requires signatures.",
          properties: {
            keyId: {
              type: "string",
              description: "The signing key's fingerprint (ed25519-<16 hex>).",
            },
            value: { type: "string", description: "The signature, base64." },
          },
        },
      },
    },
    status: statusSchema(),
  });
}

/** An IngressCheckSum or SecretCheckSum as any client reads it (Pepr's model, the gateway's JSON). */
export interface ChecksumObject {
  apiVersion?: string;
  kind?: string;
  metadata?: {
    name?: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    generation?: number;
    creationTimestamp?: Date | string;
  };
  spec?: Record<string, unknown>;
  status?: ChecksumStatus;
}
