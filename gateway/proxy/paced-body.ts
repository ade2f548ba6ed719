// limit-rate on Node's path: the response body passes through this stream, which lets bytes go
// on the schedule of policy/bandwidth.ts. It holds one upstream chunk at a time and takes the next
// only when that one is out, so a paced response reads its backend no faster than the client is
// served and memory stays bounded by a chunk.
import { Transform, type TransformCallback } from "node:stream";
import type { Bandwidth } from "../../core/annotations";
import { paceDelayMs, paceSlice } from "../policy/bandwidth";

export class PacedBody extends Transform {
  private sent = 0;
  private readonly startedAt = performance.now();
  private readonly slice: number;
  private timer: NodeJS.Timeout | undefined = undefined;

  constructor(private readonly bandwidth: Bandwidth) {
    super();
    this.slice = paceSlice(bandwidth);
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.release(chunk, 0, done);
  }

  override _destroy(error: Error | null, done: (error?: Error | null) => void): void {
    clearTimeout(this.timer);
    done(error);
  }

  /** Pushes `chunk` from `offset` as the schedule allows, then asks for the next chunk. */
  private release(chunk: Buffer, offset: number, done: TransformCallback): void {
    let at = offset;
    while (at < chunk.length) {
      const wait = paceDelayMs(this.bandwidth, this.sent, this.startedAt, performance.now());
      if (wait > 0) {
        this.timer = setTimeout(() => this.release(chunk, at, done), wait);
        return;
      }
      const free = Math.max(0, this.bandwidth.after - this.sent);
      const end = Math.min(chunk.length, at + (free > 0 ? free : this.slice));
      this.push(chunk.subarray(at, end));
      this.sent += end - at;
      at = end;
    }
    done();
  }
}
