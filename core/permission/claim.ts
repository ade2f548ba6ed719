// Which replica works on a pod's grants: a lease kept in the pod's permission.bulwark.dev/claim
// annotation, taken and renewed only by writes that carry the resourceVersion they read (so two
// replicas racing for it cannot both win), and released when the attempt ends. A replica that dies
// leaves a claim that expires after its TTL; the next replica the init client reaches takes over.
// Providers are idempotent, so a takeover that repeats a grant in flight does no harm.
import { z } from "zod";

export const claimSchema = z.object({
  holder: z.string().min(1),
  until: z.iso.datetime({ offset: true }),
});
export type Claim = z.infer<typeof claimSchema>;

export function parseClaim(annotation: string | undefined): Claim | undefined {
  if (annotation === undefined) return undefined;
  try {
    const parsed = claimSchema.safeParse(JSON.parse(annotation));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

export function serializeClaim(claim: Claim): string {
  return JSON.stringify({ holder: claim.holder, until: claim.until });
}

/** Whether `holder` may take (or renew) the claim at `now`: free, expired, malformed or its own. */
export function mayClaim(annotation: string | undefined, holder: string, now: Date): boolean {
  const claim = parseClaim(annotation);
  if (!claim) return true;
  return claim.holder === holder || Date.parse(claim.until) <= now.getTime();
}

/** The live claim's holder other than `holder`, if any. */
export function otherHolder(
  annotation: string | undefined,
  holder: string,
  now: Date,
): string | undefined {
  return mayClaim(annotation, holder, now) ? undefined : parseClaim(annotation)?.holder;
}

export function newClaim(holder: string, now: Date, ttlMs: number): Claim {
  return { holder, until: new Date(now.getTime() + ttlMs).toISOString() };
}
