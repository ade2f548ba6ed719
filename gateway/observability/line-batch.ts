// Gathers the access log's lines and writes them on in one write every few milliseconds: one
// syscall per batch instead of one per request, as Tengine-Ingress's monitor batches its
// per-request records. Lines still leave within `delayMs`, and on flush (close).

export class LineBatch {
  private lines: string[] = [];
  private timer: NodeJS.Timeout | undefined = undefined;

  constructor(
    private readonly out: NodeJS.WritableStream,
    private readonly delayMs = 50,
  ) {}

  /** Queues one line (with its "\n"). */
  push(line: string): void {
    this.lines.push(line);
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
    if (this.lines.length === 0) return;
    const text = this.lines.join("");
    this.lines = [];
    this.out.write(text);
  };
}
