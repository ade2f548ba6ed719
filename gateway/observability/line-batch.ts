// Gathers the access log's lines and writes them on in one write every few milliseconds: one
// syscall per batch instead of one per request, as Tengine-Ingress's monitor batches its
// per-request records. Lines still leave within `delayMs`, and on flush (close).
//
// Each line is copied into a buffer as it comes. Keeping the lines as strings and joining them at
// the end measured 11–15 µs per line against 3 (hack/bench/README.md): the lines, built from
// many pieces, lived until the join and had to be flattened then, and the joined text was
// converted to bytes once more on write.

/**
 * The bytes a batch holds before it is written early; a longer line is written alone. nginx's
 * access_log buffer is sized alike (64k): a buffer this size stays in the CPU's cache while it
 * fills, where a 256 KiB one, new for every batch, measured several µs per line more in the
 * gateway (hack/bench/README.md).
 */
const BATCH_BYTES = 64 * 1024;
/** Buffers whose write finished wait here for the next batch, so batches reuse warm memory. */
const SPARE_BUFFERS = 4;
/** UTF-8 takes at most 3 bytes per UTF-16 unit. */
const MAX_BYTES_PER_UNIT = 3;

export class LineBatch {
  private buffer: Buffer = Buffer.allocUnsafeSlow(BATCH_BYTES);
  private used = 0;
  private readonly spare: Buffer[] = [];
  private timer: NodeJS.Timeout | undefined = undefined;

  constructor(
    private readonly out: NodeJS.WritableStream,
    private readonly delayMs = 50,
  ) {}

  /** Queues one line (with its "\n"). */
  push(line: string): void {
    const most = line.length * MAX_BYTES_PER_UNIT;
    if (this.used + most > BATCH_BYTES) {
      this.flush();
      if (most > BATCH_BYTES) {
        this.out.write(line);
        return;
      }
    }
    this.used += this.buffer.write(line, this.used);
    if (this.timer === undefined) {
      this.timer = setTimeout(this.flush, this.delayMs);
      // Pending lines must not keep a stopping process alive; close() flushes them.
      this.timer.unref();
    }
  }

  /** Writes what has gathered now. */
  readonly flush = (): void => {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.used === 0) return;
    // The stream holds the bytes until its write is done; then the buffer can take a batch again.
    const written = this.buffer;
    this.out.write(written.subarray(0, this.used), () => this.recycle(written));
    this.buffer = this.spare.pop() ?? Buffer.allocUnsafeSlow(BATCH_BYTES);
    this.used = 0;
  };

  private recycle(buffer: Buffer): void {
    if (this.spare.length < SPARE_BUFFERS) this.spare.push(buffer);
  }
}
