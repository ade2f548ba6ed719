// The ingress guard's numeric settings, through one zod schema: a typo stops the module naming the
// variable (a NaN resync would fire every millisecond; a NaN grace would never close the window).
import { z } from "zod";
import { integer, readEnv } from "../../core/env-settings";

export const guardSettingsSchema = z.object({
  BULWARK_GUARD_RESYNC_SECONDS: integer("BULWARK_GUARD_RESYNC_SECONDS", 300, 1, 86_400),
  BULWARK_CHECKSUM_GRACE_SECONDS: integer("BULWARK_CHECKSUM_GRACE_SECONDS", 60, 0, 86_400),
  BULWARK_METRICS_PORT: integer("BULWARK_METRICS_PORT", 0, 0, 65_535),
});

export interface GuardSettings {
  resyncMs: number;
  /** How long the checksum object before the newest still attests (core/checksum/window.ts). */
  graceMs: number;
  /** Where the module serves its metrics; 0: not served. */
  metricsPort: number;
}

export function loadGuardSettings(env: NodeJS.ProcessEnv = process.env): GuardSettings {
  const s = readEnv(guardSettingsSchema, env, "ingress-guard");
  return {
    resyncMs: s.BULWARK_GUARD_RESYNC_SECONDS * 1000,
    graceMs: s.BULWARK_CHECKSUM_GRACE_SECONDS * 1000,
    metricsPort: s.BULWARK_METRICS_PORT,
  };
}
