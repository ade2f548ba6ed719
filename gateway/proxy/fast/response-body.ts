// An upstream answer as it arrives on a raw connection: its head collected until whole, then
// where its body ends by the framing the head declared (heads.ts). Shared by the fast path, which
// passes the body on as it came, and the h2 raw path, which strips the chunk framing.
import { ChunkedScanner, type ChunkSink } from "./chunked";
import { findHeadEnd } from "./head-end";
import type { Framing, ResponseHead } from "./heads";

/** Upstream response heads larger than this are refused (502). */
export const MAX_RESPONSE_HEAD = 64 * 1024;

/**
 * The head collected so far (`pending`) with `data` after it, and where it ends in `head` (the
 * index of its CRLFCRLF): -1 while it is still coming, -2 when it cannot be passed on (a bare LF,
 * or longer than MAX_RESPONSE_HEAD).
 */
export function collectResponseHead(
  pending: Buffer | undefined,
  data: Buffer,
): { head: Buffer; end: number } {
  const head = pending === undefined ? data : Buffer.concat([pending, data]);
  const end = findHeadEnd(head, 0);
  return { head, end: end === -1 && head.length > MAX_RESPONSE_HEAD ? -2 : end };
}

/** Where the body of the answer in progress ends. */
export class ResponseBody {
  framing: Framing = "none";
  /** A chunked body's scanner (its payload count, its kept trailers). */
  chunks: ChunkedScanner | undefined = undefined;
  private left = 0;

  /** A new answer; `sink` and `keepTrailers` decode a chunked body (chunked.ts). */
  begin(head: ResponseHead, sink?: ChunkSink, keepTrailers = false): void {
    this.framing = head.framing;
    this.left = head.length;
    this.chunks = head.framing === "chunked" ? new ChunkedScanner(sink, keepTrailers) : undefined;
  }

  /** Where the body ends in `data` from `start`: an index, -1 when it goes on, -2 when malformed. */
  stop(data: Buffer, start: number): number {
    if (this.framing === "length") {
      const stop = Math.min(data.length, start + this.left);
      this.left -= stop - start;
      return this.left === 0 ? stop : -1;
    }
    if (this.framing === "chunked") return this.chunks!.scan(data, start);
    return -1;
  }
}
