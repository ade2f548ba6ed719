// Inactivity timeouts for the fast path's sockets, kept without Node's socket timers. A socket
// with a timeout set re-arms its timer (Timeout.refresh: a clock read and a move in the timer
// list) on every read and write, four or more times per exchange; with none set, an exchange
// measured about 1.6 µs cheaper (hack/bench/README.md). Here activity only stamps the time; the
// one timer looks at the stamp when it fires and, if the socket was active meanwhile, waits for
// what is left. So a busy connection's timer fires once per timeout period, not once per read.
import { performance } from "node:perf_hooks";

/** The clock the stamps and deadlines are read on (milliseconds). */
export type Clock = () => number;

export class IdleTimer {
  /** The timeout; 0 when off. */
  private ms = 0;
  /** When the socket was last active. */
  private last = 0;
  private timer: NodeJS.Timeout | undefined = undefined;
  /** When the armed timer fires; Infinity when none is armed. */
  private firesAt = Infinity;
  /** The socket's unwritten bytes when a write last stayed queued, or when the timer last looked. */
  private pendingSeen = 0;

  /**
   * @param expired called once `ms` pass without activity (again only after new activity)
   * @param pending the socket's unwritten bytes: a queue of writes that moved is activity, as
   *   Node suppresses a socket's timeout while its write queue moves
   */
  constructor(
    private readonly expired: () => void,
    private readonly pending: () => number,
    private readonly clock: Clock = performance.now.bind(performance),
  ) {}

  /** The socket read or wrote: the countdown starts again. */
  touch(): void {
    this.last = this.clock();
    // It fired (and expired) since: activity arms it again, as Node's refresh does.
    if (this.timer === undefined && this.ms !== 0) this.arm(this.ms);
  }

  /** A write stayed queued with this many bytes unwritten: the queue moving from here is activity. */
  queued(pending: number): void {
    this.pendingSeen = pending;
  }

  /** Times out after `ms` without activity, counted from now; 0 turns it off. */
  set(ms: number): void {
    this.ms = ms;
    this.last = this.clock();
    if (ms === 0) this.disarm();
    // A timer due later than the new deadline would fire late; one due earlier looks and waits on.
    else if (this.last + ms < this.firesAt) this.arm(ms);
  }

  /** Off for good (the socket closed or changed hands). */
  stop(): void {
    this.ms = 0;
    this.disarm();
  }

  private arm(ms: number): void {
    clearTimeout(this.timer);
    // Node's timers count whole milliseconds; a fraction left over is rounded up, not down.
    const wait = Math.max(1, Math.ceil(ms));
    this.firesAt = this.clock() + wait;
    this.timer = setTimeout(this.look, wait);
    // Like a socket's own timeout, it must not keep a stopping process alive.
    this.timer.unref();
  }

  private disarm(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.firesAt = Infinity;
  }

  private readonly look = (): void => {
    this.timer = undefined;
    this.firesAt = Infinity;
    if (this.ms === 0) return;
    const pending = this.pending();
    if (pending > 0 && pending !== this.pendingSeen) {
      this.pendingSeen = pending;
      this.last = this.clock();
    }
    const left = this.last + this.ms - this.clock();
    if (left > 0) this.arm(left);
    else this.expired();
  };
}
