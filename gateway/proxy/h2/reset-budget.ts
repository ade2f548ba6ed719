// The rapid-reset defence (CVE-2023-44487): a client that opens streams and cancels them at once
// makes the gateway start an upstream exchange per stream while its concurrency limit never
// fills. Each stream the client cancels before its answer ended spends one unit of the
// connection's budget; each answer delivered earns one back. A spent budget closes the
// connection (GOAWAY ENHANCE_YOUR_CALM), whatever the pace: there is no clock to outrun.
export class ResetBudget {
  private left: number;

  constructor(private readonly capacity: number) {
    this.left = capacity;
  }

  /** The client cancelled a stream; false once the budget is spent. */
  cancelled(): boolean {
    this.left--;
    return this.left >= 0;
  }

  /** A stream's answer went out whole. */
  answered(): void {
    if (this.left < this.capacity) this.left++;
  }
}
