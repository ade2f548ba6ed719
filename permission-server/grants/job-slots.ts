// Jobs in flight per provider. The provider's limiter orders calls, not jobs: with 500 pods
// arriving at once, every grant call would queue ahead of every poll, and no pod would finish
// until nearly all had started. Admitting only as many jobs as the rate limit can keep moving
// (about two seconds' worth of calls) lets each admitted pod finish soon after it starts: the
// same total time, a much lower median time-to-granted. FIFO; a waiter that aborts leaves.

export class JobSlots {
  #free: number;
  readonly #queue: { resolve: () => void; signal: AbortSignal; onAbort: () => void }[] = [];

  constructor(readonly size: number) {
    this.#free = Math.max(1, size);
  }

  get waiting(): number {
    return this.#queue.length;
  }

  /** Resolves with the release function once a slot is free; undefined if `signal` aborts first. */
  acquire(signal: AbortSignal): Promise<(() => void) | undefined> {
    if (signal.aborted) return Promise.resolve(undefined);
    if (this.#free > 0 && this.#queue.length === 0) {
      this.#free--;
      return Promise.resolve(this.#releaser());
    }
    return new Promise(resolve => {
      const waiter = {
        resolve: () => resolve(this.#releaser()),
        signal,
        onAbort: () => {
          const index = this.#queue.indexOf(waiter);
          if (index >= 0) this.#queue.splice(index, 1);
          resolve(undefined);
        },
      };
      signal.addEventListener("abort", waiter.onAbort, { once: true });
      this.#queue.push(waiter);
    });
  }

  #releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.#queue.shift();
      if (!next) {
        this.#free++;
        return;
      }
      next.signal.removeEventListener("abort", next.onAbort);
      next.resolve();
    };
  }
}
