// The admin port's /metrics: the control side's registry and the data plane's per-host traffic
// metrics, summed over every worker process at scrape time (prom-client's aggregation, over the
// data plane's own IPC), so the endpoint counts exactly the requests answered before the scrape.
import {
  AggregatorRegistry,
  Registry,
  type MetricObjectWithValues,
  type MetricValue,
} from "prom-client";
import type { MetricJson } from "./traffic";

/** One process's metrics, in the shape of prom-client's registry.getMetricsAsJSON(). */
export type ProcessMetrics = MetricJson[];

type Sample = MetricJson["values"][number];

/**
 * Per-process metrics summed into one list, sample by sample (same name and labels): how the
 * counts of workers that died are kept.
 */
export function sumMetrics(processes: readonly ProcessMetrics[]): ProcessMetrics {
  const byName = new Map<string, { metric: MetricJson; samples: Map<string, Sample> }>();
  for (const metric of processes.flat()) {
    let entry = byName.get(metric.name);
    if (entry === undefined) {
      entry = { metric, samples: new Map() };
      byName.set(metric.name, entry);
    }
    addSamples(entry.samples, metric.values);
  }
  return [...byName.values()].map(({ metric, samples }) => ({
    ...metric,
    values: [...samples.values()],
  }));
}

function addSamples(into: Map<string, Sample>, samples: readonly Sample[]): void {
  for (const sample of samples) {
    const labels = Object.entries(sample.labels).sort(([a], [b]) => (a < b ? -1 : 1));
    const key = `${sample.metricName ?? ""}${JSON.stringify(labels)}`;
    const found = into.get(key);
    if (found === undefined) into.set(key, { ...sample });
    else found.value += sample.value;
  }
}

/** The Prometheus text of per-process metrics, summed label set by label set. */
export async function sumProcessMetrics(processes: readonly ProcessMetrics[]): Promise<string> {
  if (processes.length === 0) return "";
  // The same shape, typed by prom-client with its own enums for type and aggregator.
  const asPromClient = processes as unknown as MetricObjectWithValues<MetricValue<string>>[][];
  return AggregatorRegistry.aggregate([...asPromClient]).metrics();
}

/**
 * A registry whose text is the control registry's followed by the summed traffic metrics: the
 * admin server takes one registry, and the two sets of names never overlap.
 */
export class GatewayScrapeRegistry extends Registry {
  constructor(
    private readonly control: Registry,
    private readonly traffic: () => Promise<ProcessMetrics[]>,
  ) {
    super();
  }

  override async metrics(): Promise<string> {
    const [control, traffic] = await Promise.all([
      this.control.metrics(),
      this.traffic().then(sumProcessMetrics),
    ]);
    return traffic === "" ? control : `${control}\n${traffic}`;
  }
}
