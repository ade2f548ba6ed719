// One exchange's numbers while it runs (start, upstream timing, bytes, which backend and why),
// turned into one RequestRecord when it ends. Mutable and reused per connection on the fast path,
// so observing a request allocates only the record itself.
import { performance } from "node:perf_hooks";
import type { Route } from "../routing/table";
import type { RequestRecord } from "./traffic";

/** Where finished requests go: the metrics, the access log, or both. */
export interface TrafficObserver {
  observe(record: RequestRecord): void;
  /** The access log is on: the exchanges' log-only details are wanted. */
  readonly logging: boolean;
}

/** What only the access log shows of an exchange; gathered only while it is on. */
export interface ExchangeDetails {
  /** The client: the peer, or whom trusted proxies name. */
  client: string;
  /** The connection's peer. */
  peer: string;
  /** "" when the client sent none. */
  userAgent: string;
  scheme: string;
}

/** The details while the access log is off. */
const NO_DETAILS: ExchangeDetails = {
  client: "",
  peer: "",
  userAgent: "",
  scheme: "",
};

export type Variant = RequestRecord["variant"];

/** The target's path, without the query (which may hold secrets and would bloat the log). */
function pathOf(target: string): string {
  const at = target.indexOf("?");
  return at < 0 ? target : target.slice(0, at);
}

export class ExchangeTally {
  private open = false;
  private startedAt = 0;
  private upstreamAt = 0;
  private upstreamSeconds: number | undefined = undefined;
  private method = "";
  private target = "";
  private authority = "";
  private route: Route | undefined = undefined;
  private variant: Variant = "main";
  private decision = "";
  private upstream = "";
  private upstreamStatus = 0;
  private details: ExchangeDetails = NO_DETAILS;
  /** The request id (set once known; the access log's, and X-Request-ID upstream). */
  requestId = "";
  /**
   * "HTTP/1.1" unless the request said otherwise ("HTTP/1.0", "HTTP/2.0"): the metrics' protocol
   * label and the access log's protocol field, so both always agree.
   */
  protocol = "HTTP/1.1";
  requestBytes = 0;
  responseBytes = 0;

  /** Whether describe() is wanted: the access log is on. */
  readonly logging: boolean;

  constructor(private readonly observer: TrafficObserver) {
    this.logging = observer.logging;
  }

  /** Starts timing an exchange; `requestBytes` as far as the head tells (a length). */
  begin(method: string, target: string, authority: string | undefined, requestBytes = 0): void {
    this.open = true;
    this.startedAt = performance.now();
    this.upstreamSeconds = undefined;
    this.method = method;
    this.target = target;
    this.authority = authority ?? "";
    this.route = undefined;
    this.variant = "main";
    this.decision = "";
    this.upstream = "";
    this.upstreamStatus = 0;
    this.details = NO_DETAILS;
    this.requestId = "";
    this.protocol = "HTTP/1.1";
    this.requestBytes = requestBytes;
    this.responseBytes = 0;
  }

  routed(route: Route, variant: Variant, decision: string): void {
    this.route = route;
    this.variant = variant;
    this.decision = decision;
  }

  /**
   * The request head goes to this endpoint ("address:port") now. A retry adds to the list, as
   * nginx's $upstream_addr does ("10.0.0.1:80, 10.0.0.2:80"); the status is the last attempt's.
   */
  sent(endpoint: string): void {
    this.upstream = this.upstream === "" ? endpoint : `${this.upstream}, ${endpoint}`;
    this.upstreamAt = performance.now();
  }

  /** The log-only details of the exchange; call only when `logging`. */
  describe(details: ExchangeDetails): void {
    this.details = details;
  }

  /** The upstream's response head arrived, with this status. */
  answered(status: number): void {
    this.upstreamStatus = status;
    this.upstreamSeconds = (performance.now() - this.upstreamAt) / 1000;
  }

  /** Records the exchange once; later calls (a close after the end) do nothing. */
  finish(status: number): void {
    if (!this.open) return;
    this.open = false;
    const route = this.route;
    const now = performance.now();
    const details = this.details;
    this.observer.observe({
      host: route?.host ?? "",
      authority: this.authority,
      ingress: route?.ingress ?? "",
      service: route?.backend.service ?? "",
      variant: this.variant,
      method: this.method,
      path: pathOf(this.target),
      status,
      requestBytes: this.requestBytes,
      responseBytes: this.responseBytes,
      durationSeconds: (now - this.startedAt) / 1000,
      upstreamSeconds: this.upstreamSeconds,
      upstream: this.upstream,
      decision: this.decision,
      upstreamStatus: this.upstreamStatus,
      upstreamResponseSeconds:
        this.upstreamStatus === 0 ? undefined : (now - this.upstreamAt) / 1000,
      requestId: this.requestId,
      client: details.client,
      peer: details.peer,
      userAgent: details.userAgent,
      scheme: details.scheme,
      protocol: this.protocol,
    });
  }
}
