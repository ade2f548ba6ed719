// Hex digests of whole strings or buffers. Node's one-shot `crypto.hash` (Node >= 20.12) skips the
// Hash object that `createHash` allocates, which is measurable over 100k objects; older Node 20
// releases, still allowed by package.json, get `createHash`.
import { createHash, hash } from "node:crypto";

export type DigestAlgorithm = "md5" | "sha1" | "sha256";

const oneShot = typeof hash === "function" ? hash : undefined;

/** Lowercase hex digest of `data` (a string is hashed as UTF-8). */
export function hexDigest(algorithm: DigestAlgorithm, data: string | Buffer): string {
  if (oneShot) return oneShot(algorithm, data, "hex");
  return createHash(algorithm).update(data).digest("hex");
}
