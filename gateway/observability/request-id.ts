// The request id, as ingress-nginx's $req_id: the client's X-Request-ID when it sent a non-empty
// one, else 32 random hex characters (nginx's $request_id: 16 random bytes). It goes upstream as
// X-Request-ID and into the access log. Random bytes are drawn in batches, so an id costs one
// hex conversion of 16 of them.
import { randomFillSync } from "node:crypto";

const ID_BYTES = 16;
const POOL = Buffer.allocUnsafe(ID_BYTES * 256);
let next = POOL.length;

/** 32 lowercase hex characters from the CSPRNG. */
export function newRequestId(): string {
  if (next === POOL.length) {
    randomFillSync(POOL);
    next = 0;
  }
  const id = POOL.toString("hex", next, next + ID_BYTES);
  next += ID_BYTES;
  return id;
}

/** The client's X-Request-ID when it is not empty, else a new id. */
export function requestIdOf(sent: string | undefined): string {
  return sent === undefined || sent === "" ? newRequestId() : sent;
}
