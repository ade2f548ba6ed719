// Inactivity timeouts for the fast path's sockets, kept without Node's socket timers. A socket
// with a timeout set re-arms its timer (Timeout.refresh: a clock read and a move in the timer
// list) on every read and write, four or more times per exchange (1.75 % of the gateway's CPU in
// a profile, hack/bench/README.md). Here activity only notes the time on a clock that one shared
// interval advances every COARSE_MS, so a read or write costs a store and no clock read; the one
// timer per socket looks at the note when it fires and, if the socket was active meanwhile, waits
// for what is left. A busy connection's timer fires once per timeout period, not once per read.
import { performance } from "node:perf_hooks";

/** How far the noted times may lag: a timeout fires up to this much late, never early. */
const COARSE_MS = 100;

/** The times the timer notes activity on and compares deadlines with (milliseconds). */
export interface IdleClock {
  /** The time to note activity with: cheap, and never ahead of `now()`. */
  noted(): number;
  now(): number;
  /** How far `noted()` may lag behind `now()`. */
  readonly lagMs: number;
}

let coarseNow = 0;
let ticker: NodeJS.Timeout | undefined = undefined;

/** The clock of every socket's timer: `noted()` is a variable one interval keeps current. */
export const COARSE_CLOCK: IdleClock = {
  noted: () => coarseNow,
  now: () => performance.now(),
  lagMs: COARSE_MS,
};

/** Starts the shared interval (once); it must not keep a stopping process alive. */
function startTicking(): void {
  if (ticker !== undefined) return;
  coarseNow = performance.now();
  ticker = setInterval(() => (coarseNow = performance.now()), COARSE_MS);
  ticker.unref();
}

export class IdleTimer {
  /** The timeout; 0 when off. */
  private ms = 0;
  /** When the socket was last active, on the clock's `noted()`. */
  private last = 0;
  private timer: NodeJS.Timeout | undefined = undefined;
  /** When the armed timer fires, on the clock's `now()`; Infinity when none is armed. */
  private firesAt = Infinity;
  /** The socket's unwritten bytes after the last write, or when the timer last looked. */
  private pendingSeen = 0;

  /**
   * @param expired called once `ms` pass without activity (again only after new activity)
   * @param pending the socket's unwritten bytes: a queue of writes that moved is activity, as
   *   Node suppresses a socket's timeout while its write queue moves
   */
  constructor(
    private readonly expired: () => void,
    private readonly pending: () => number,
    private readonly clock: IdleClock = COARSE_CLOCK,
  ) {
    if (clock === COARSE_CLOCK) startTicking();
  }

  /** The socket read or wrote: the countdown starts again. */
  touch(): void {
    this.last = this.clock.noted();
    // It fired (and expired) since: activity arms it again, as Node's refresh does.
    if (this.timer === undefined && this.ms !== 0) this.arm(this.ms + this.clock.lagMs);
  }

  /** Times out after `ms` without activity, counted from now; 0 turns it off. */
  set(ms: number): void {
    const changed = ms !== this.ms;
    this.ms = ms;
    this.last = this.clock.noted();
    // Bytes queued before now are not progress: only the queue moving from here is.
    this.pendingSeen = this.pending();
    if (ms === 0) this.disarm();
    else if (this.timer === undefined) this.arm(ms + this.clock.lagMs);
    // A timer due later than the new deadline would fire late; one due earlier looks and waits on.
    else if (changed && this.clock.now() + ms < this.firesAt) this.arm(ms + this.clock.lagMs);
  }

  /** After a write: this many bytes wait unwritten, and the queue moving from here is activity. */
  queued(pending: number): void {
    this.pendingSeen = pending;
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
    this.firesAt = this.clock.now() + wait;
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
      this.last = this.clock.noted();
    }
    // The noted time may lag by lagMs: waiting for it too means never expiring early.
    const left = this.last + this.ms + this.clock.lagMs - this.clock.now();
    if (left > 0) this.arm(left);
    else this.expired();
  };
}
