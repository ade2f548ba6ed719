// How the checksum guard acts on a kind: `off` (nothing hashed, nothing refused), `observe`
// (verified and reported, never refused: the way to turn it on safely) or `enforce` (a change
// that matches no attestation is refused and the last good configuration keeps serving). The
// gateway and the Pepr module read the same variables (BULWARK_INGRESS_CHECKSUM,
// BULWARK_SECRET_CHECKSUM); the old booleans keep their meaning.
import { fail, ok, type Result } from "../result";

export const GUARD_MODES = ["off", "observe", "enforce"] as const;
export type GuardMode = (typeof GUARD_MODES)[number];

/** The variables that set it, per guarded kind. */
export const GUARD_MODE_VARIABLES = {
  ingress: "BULWARK_INGRESS_CHECKSUM",
  secret: "BULWARK_SECRET_CHECKSUM",
} as const;

const LEGACY: Record<string, GuardMode> = { true: "enforce", on: "enforce", false: "off" };

/** `off`, `observe`, `enforce`, or the old `true`/`on` (enforce) and `false` (off); any case. */
export function parseGuardMode(
  raw: string | undefined,
  field: string,
  fallback: GuardMode = "off",
): Result<GuardMode> {
  const text = (raw ?? "").trim().toLowerCase();
  if (text === "") return ok(fallback);
  if ((GUARD_MODES as readonly string[]).includes(text)) return ok(text as GuardMode);
  const legacy = LEGACY[text];
  if (legacy !== undefined) return ok(legacy);
  return fail([
    {
      field,
      message: `must be off, observe or enforce (true and false mean enforce and off); got ${JSON.stringify(raw)}`,
    },
  ]);
}
