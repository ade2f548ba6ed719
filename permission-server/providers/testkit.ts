// A manual clock for tests of timer-driven code (the limiter): time moves only when a test says.
import type { LimiterClock } from "./limiter";

interface Timer {
  at: number;
  seq: number;
  callback: () => void;
}

/** Lets pending promise callbacks (and what they chain) run. */
export function flushPromises(): Promise<void> {
  return new Promise(resolve => setImmediate(resolve));
}

export class FakeClock implements LimiterClock {
  private time = 0;
  private seq = 0;
  private readonly timers = new Set<Timer>();

  now(): number {
    return this.time;
  }

  setTimeout(callback: () => void, ms: number): unknown {
    const timer = { at: this.time + Math.max(0, ms), seq: this.seq++, callback };
    this.timers.add(timer);
    return timer;
  }

  clearTimeout(handle: unknown): void {
    this.timers.delete(handle as Timer);
  }

  /** Moves time forward by `ms`, firing due timers in order and settling promises after each. */
  async advance(ms: number): Promise<void> {
    const until = this.time + ms;
    await flushPromises();
    for (;;) {
      const next = this.nextTimer();
      if (!next || next.at > until) break;
      this.timers.delete(next);
      this.time = Math.max(this.time, next.at);
      next.callback();
      await flushPromises();
    }
    this.time = until;
    await flushPromises();
  }

  private nextTimer(): Timer | undefined {
    let best: Timer | undefined;
    for (const timer of this.timers) {
      if (!best || timer.at < best.at || (timer.at === best.at && timer.seq < best.seq)) {
        best = timer;
      }
    }
    return best;
  }
}
