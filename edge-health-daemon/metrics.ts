// The daemon's Prometheus metrics, on the registry it is given: main.ts serves its own on
// --metrics-port (kube/metrics-server.ts); tests and the benchmark pass theirs.
import { Counter, Gauge, Histogram, Registry } from "prom-client";

export class EdgeMetrics {
  readonly probeOk: Gauge<"peer" | "check">;
  readonly votesWritten: Counter<"value">;
  readonly messagesAccepted: Counter;
  readonly messagesRejected: Counter<"reason">;
  readonly decisionSeconds: Histogram;

  constructor(readonly registry: Registry = new Registry()) {
    const registers = [registry];
    this.probeOk = new Gauge({
      name: "bulwark_edge_probe_ok",
      help: "1 when the last check of this kind on the peer passed, 0 when it failed",
      labelNames: ["peer", "check"],
      registers,
    });
    this.votesWritten = new Counter({
      name: "bulwark_edge_votes_written_total",
      help: "Votes this daemon wrote on Nodes (value changes and term refreshes), by value",
      labelNames: ["value"],
      registers,
    });
    this.messagesAccepted = new Counter({
      name: "bulwark_edge_messages_accepted_total",
      help: "Peers' signed results accepted",
      registers,
    });
    this.messagesRejected = new Counter({
      name: "bulwark_edge_messages_rejected_total",
      help: "Peers' results refused, by reason (malformed, bad-signature, stale, replayed, ...)",
      labelNames: ["reason"],
      registers,
    });
    // Check periods are 10 s by default and 0.1 to 3600 s allowed; a decision takes 1 to 3.
    this.decisionSeconds = new Histogram({
      name: "bulwark_edge_decision_seconds",
      help: "From the start of the check round in which this daemon first held a new decision to its write being acknowledged",
      buckets: [0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300, 900],
      registers,
    });
  }
}
