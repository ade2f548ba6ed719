// Tengine-Ingress `disable-robots`: serve a deny-all /robots.txt on the host instead of proxying it.
import { z } from "zod";
import { parseFamily, type Family } from "./family";
import { annotation, parseBool } from "./validators";
import type { Result } from "../result";

const fields = {
  disableRobots: {
    annotation: "disable-robots",
    type: "boolean",
    default: "false",
    doc: 'Serve "User-agent: * / Disallow: /" at /robots.txt instead of proxying it (Tengine; default false).',
  },
} as const;

export const robotsSchema = z
  .object({ disableRobots: annotation(parseBool).optional() } satisfies Record<
    keyof typeof fields,
    z.ZodType
  >)
  .transform(v => ({ disableRobots: v.disableRobots ?? false }));

export type RobotsConfig = z.output<typeof robotsSchema>;

export const robotsFamily: Family<RobotsConfig, keyof typeof fields> = {
  name: "robots",
  fields,
  schema: robotsSchema,
};

export function parseRobots(
  annotations: Readonly<Record<string, string>> | undefined,
): Result<RobotsConfig | undefined> {
  return parseFamily(robotsFamily, annotations);
}
