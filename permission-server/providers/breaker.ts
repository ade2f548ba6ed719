// One breaker per provider, in each replica: consecutive transient failures (timeouts, 5xx, 429,
// refused connections) open it for a while; then one probe call goes through (half-open), and
// its outcome closes or re-opens it. While it is open, jobs wait instead of calling, and nothing
// that happens then counts against any pod's own breaker: an outage of the authorization API
// must not burn every pod's three strikes.

export type BreakerState = "closed" | "open" | "half-open";

export interface ProviderBreakerOptions {
  /** Consecutive transient failures that open it. */
  failures: number;
  /** How long it stays open before one probe is let through. */
  openMs: number;
  now?: () => number;
}

export class ProviderBreaker {
  readonly #options: Required<ProviderBreakerOptions>;
  #consecutive = 0;
  #openedAt: number | undefined;
  #probing = false;
  #changes = new Set<() => void>();

  constructor(options: ProviderBreakerOptions) {
    this.#options = { now: Date.now, ...options };
  }

  get state(): BreakerState {
    if (this.#openedAt === undefined) return "closed";
    return this.#options.now() - this.#openedAt >= this.#options.openMs ? "half-open" : "open";
  }

  /** When an open breaker lets its probe through (ms since epoch); undefined when closed. */
  get reopensAt(): number | undefined {
    return this.#openedAt === undefined ? undefined : this.#openedAt + this.#options.openMs;
  }

  /** Whether a call may go now; in half-open, only one caller gets `true` until it reports. */
  tryAcquire(): boolean {
    const state = this.state;
    if (state === "closed") return true;
    if (state === "open" || this.#probing) return false;
    this.#probing = true;
    return true;
  }

  /** The outcome of a call that `tryAcquire` let through. */
  success(): void {
    const wasOpen = this.#openedAt !== undefined;
    this.#consecutive = 0;
    this.#openedAt = undefined;
    this.#probing = false;
    if (wasOpen) this.#notify();
  }

  failure(): void {
    this.#consecutive++;
    const probeFailed = this.#probing;
    this.#probing = false;
    if (probeFailed || this.#consecutive >= this.#options.failures) {
      this.#openedAt = this.#options.now();
    }
  }

  /** A call that ended without a verdict on the provider (aborted): frees the probe slot. */
  release(): void {
    this.#probing = false;
  }

  /** Runs `listener` when the breaker closes; returns the unsubscribe function. */
  onClose(listener: () => void): () => void {
    this.#changes.add(listener);
    return () => this.#changes.delete(listener);
  }

  #notify(): void {
    for (const listener of [...this.#changes]) listener();
  }
}
