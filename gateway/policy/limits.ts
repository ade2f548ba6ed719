// The rate-limit annotations compiled for the gateway: one Limits per Ingress and configuration,
// found again when the routing table is rebuilt (ingress-nginx's zones are named after the Ingress
// and survive reloads), so a rebuild never hands limited clients a fresh burst. Its paths share it,
// as they share ingress-nginx's zones. Kept by weak reference: once no table's policy holds it, it
// goes with its counts.
import { limitExempt, limitsAnything, type RateLimitConfig } from "../../core/annotations";
import { STATUS_CODES } from "node:http";
import type { Address } from "../../core/net/ip";
import type { OwnAnswer } from "./head-edits";
import {
  addressKey,
  ConnectionLimiter,
  RequestLimiter,
  requestRate,
  type RequestRate,
} from "./rate-limit";

export interface LimitOptions {
  /** The answer's status (BULWARK_LIMIT_STATUS; ingress-nginx's limit-req-status-code, 503). */
  status: number;
  /** Worker processes sharing the pod's listeners: each enforces 1/share of every limit. */
  share: number;
}

export const DEFAULT_LIMIT_OPTIONS: LimitOptions = { status: 503, share: 1 };

export type LimitRefusal = "rate-limited" | "connection-limited";

export class Limits {
  /** The answer to a refused request: the status with nginx's reason phrase as plain text. */
  readonly answer: OwnAnswer;

  readonly requests: RequestLimiter | undefined;
  readonly connections: ConnectionLimiter | undefined;

  constructor(
    readonly config: RateLimitConfig,
    readonly status: number,
    share: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.answer = Object.freeze({
      status,
      headers: [["Content-Type", "text/plain; charset=utf-8"] as const],
      body: `${status} ${STATUS_CODES[status] ?? "Refused"}\n`,
    });
    const rates: RequestRate[] = [];
    const burst = (n: number) => n * config.burstMultiplier;
    if (config.rps > 0) rates.push(requestRate(config.rps, "s", burst(config.rps), share));
    if (config.rpm > 0) rates.push(requestRate(config.rpm, "m", burst(config.rpm), share));
    this.requests = rates.length > 0 ? new RequestLimiter(rates) : undefined;
    this.connections =
      config.connections > 0
        ? new ConnectionLimiter(Math.ceil(config.connections / share))
        : undefined;
  }

  /**
   * Admits a request from `client`: the refusal's reason, or the release to call once when the
   * exchange ends (a no-op when no connection limit counts it). limit_req is checked first, as
   * nginx runs it before limit_conn; a request it refuses holds no connection slot.
   */
  admit(client: Address): LimitRefusal | (() => void) {
    if (limitExempt(this.config, client)) return NO_RELEASE;
    const key = addressKey(client);
    if (this.requests !== undefined && !this.requests.take(key, Math.floor(this.now()))) {
      return "rate-limited";
    }
    const connections = this.connections;
    if (connections === undefined) return NO_RELEASE;
    if (!connections.acquire(key)) return "connection-limited";
    let released = false;
    return () => {
      if (released) return;
      released = true;
      connections.release(key);
    };
  }
}

export const NO_RELEASE = (): void => {};

const known = new Map<string, WeakRef<Limits>>();
let sweepAt = 64;

/** The Ingress's limits, the same object as long as its configuration is; undefined for none. */
export function limitsFor(
  ingress: string,
  config: RateLimitConfig | undefined,
  options: LimitOptions = DEFAULT_LIMIT_OPTIONS,
): Limits | undefined {
  if (config === undefined || !limitsAnything(config)) return undefined;
  const id = JSON.stringify([
    ingress,
    config.rps,
    config.rpm,
    config.burstMultiplier,
    config.connections,
    config.allow?.text ?? null,
    options.status,
    options.share,
  ]);
  const found = known.get(id)?.deref();
  if (found !== undefined) return found;
  const made = new Limits(config, options.status, options.share);
  known.set(id, new WeakRef(made));
  if (known.size >= sweepAt) sweep();
  return made;
}

/** Forgets collected entries; the next sweep waits until the map has doubled. */
function sweep(): void {
  for (const [id, ref] of known) if (ref.deref() === undefined) known.delete(id);
  sweepAt = Math.max(64, known.size * 2);
}
