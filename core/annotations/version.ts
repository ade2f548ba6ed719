// `version`: the integer V in Tengine's checksum IDs "<N>-<V>" (DESIGN.md, "The checksum: two modes").
import { z } from "zod";
import { keyOf, parseFamily, type Family } from "./family";
import { annotation, parseIntFrom } from "./validators";
import type { Result } from "../result";

const fields = {
  version: {
    annotation: "version",
    type: "integer",
    default: "",
    doc: "Object version for the tengine-mode checksum ID <N>-<V>; 0 or absent leaves the object out.",
  },
} as const;

export const versionSchema = z
  .object({
    version: annotation(raw => parseIntFrom(raw, 0)).optional(),
  } satisfies Record<keyof typeof fields, z.ZodType>)
  .transform(v => v.version);

/** The version, when set. */
export type VersionConfig = z.output<typeof versionSchema>;

export const versionFamily: Family<VersionConfig, keyof typeof fields> = {
  name: "version",
  fields,
  schema: versionSchema,
  // Tengine silently leaves version 0 out of the checksum; say so, since it is legal but surprising.
  warnings: version =>
    version === 0
      ? [
          `${keyOf(versionFamily, "version")} is 0: this object is left out of the tengine-mode checksum`,
        ]
      : [],
};

export function parseVersion(
  annotations: Readonly<Record<string, string>> | undefined,
): Result<VersionConfig | undefined> {
  return parseFamily(versionFamily, annotations);
}
