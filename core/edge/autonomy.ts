// A node's own say in its autonomy: the `edge.bulwark.dev/autonomy` annotation's one schema.
//
// `edge.bulwark.dev/autonomy` (as OpenYurt's `node.openyurt.io/autonomy-duration`, but bounded):
//   "false"  the node is never protected (opted out);
//   "true"   protected as voted, with the zone's or the default limit;
//   "<duration>" such as "600s", "90m", "1h30m", "24h": protected as voted, with this limit; "0s"
//            means no autonomy. At most MAX_UNKNOWN_SECONDS_LIMIT: "forever" is what the limit
//            exists to prevent.
// It supersedes `edge.bulwark.dev/max-unknown-seconds` (whole seconds), still read when the new
// one is absent. A value that does not parse is reported and ignored (the next source applies),
// so a typo can neither grant forever nor silently opt a node out.
import { z } from "zod";
import { MAX_UNKNOWN_SECONDS_LIMIT } from "./zone";

export type AutonomySetting = { optedOut: true } | { optedOut: false; limitSeconds?: number };

const DURATION = /^(?:(\d{1,7})h)?(?:(\d{1,9})m)?(?:(\d{1,9})s)?$/;

/** The annotation's meaning, or an error message for the annotation (without its name). */
export const autonomySchema = z.string().transform((text, ctx): AutonomySetting => {
  if (text === "false") return { optedOut: true };
  if (text === "true") return { optedOut: false };
  const match = DURATION.exec(text);
  if (text === "" || match === null) {
    ctx.addIssue({
      code: "custom",
      message: 'must be "true", "false" or a duration such as "600s", "90m", "1h30m"',
    });
    return z.NEVER;
  }
  const [, h = "0", m = "0", s = "0"] = match;
  const seconds = Number(h) * 3600 + Number(m) * 60 + Number(s);
  if (seconds > MAX_UNKNOWN_SECONDS_LIMIT) {
    ctx.addIssue({
      code: "custom",
      message: `must be at most ${MAX_UNKNOWN_SECONDS_LIMIT}s (a year)`,
    });
    return z.NEVER;
  }
  return { optedOut: false, limitSeconds: seconds };
});
