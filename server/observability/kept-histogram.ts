// A histogram whose children the caller keeps and whose observations check nothing: a child is
// made once per label set, and observing it adds to plain numbers. prom-client's own children
// (labels()) are only its label object bound to observe(), which checks and hashes the labels
// on every observation: 2.3 % of a request's CPU under load (issue 58), for the request
// metrics, which every request observes. The registry reads this one at scrape time as any of
// its own metrics (name, help, type, get, reset), in the same exposition.
import type { Metric, Registry } from 'prom-client';

type Labels = Record<string, string>;
/** One line of the exposition, as prom-client's metrics give them to the registry. */
interface Sample {
  labels: Record<string, string | number>;
  value: number;
  metricName: string;
}

export class KeptHistogram {
  readonly type = 'histogram' as const;
  readonly aggregator = 'sum' as const;
  readonly children: KeptChild[] = [];

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly bounds: readonly number[],
    registry: Registry,
  ) {
    registry.registerMetric(this as unknown as Metric);
  }

  /** The child of one label set: the caller keeps it (one per label set). */
  child(labels: Labels): KeptChild {
    const child = new KeptChild(labels, this.bounds);
    this.children.push(child);
    return child;
  }

  /** The exposition's values, as prom-client's Histogram gives them: cumulative buckets, +Inf, sum and count. */
  get(): Promise<{ name: string; help: string; type: 'histogram'; values: Sample[]; aggregator: 'sum' }> {
    const values: Sample[] = [];
    const bucket = `${this.name}_bucket`;
    for (const c of this.children) {
      let cumulative = 0;
      for (const [i, le] of this.bounds.entries()) {
        cumulative += c.buckets[i]!;
        values.push({ labels: { le, ...c.labels }, value: cumulative, metricName: bucket });
      }
      values.push({ labels: { le: '+Inf', ...c.labels }, value: c.count, metricName: bucket });
      values.push({ labels: c.labels, value: c.sum, metricName: `${this.name}_sum` });
      values.push({ labels: c.labels, value: c.count, metricName: `${this.name}_count` });
    }
    return Promise.resolve({ name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator });
  }

  reset(): void {
    for (const c of this.children) c.reset();
  }
}

export class KeptChild {
  count = 0;
  sum = 0;
  /** Observations per bucket (not cumulative), by the index of its upper bound. */
  readonly buckets: Float64Array;

  constructor(
    readonly labels: Labels,
    private readonly bounds: readonly number[],
  ) {
    this.buckets = new Float64Array(bounds.length);
  }

  observe(value: number): void {
    this.count += 1;
    this.sum += value;
    for (let i = 0; i < this.bounds.length; i++) {
      if (value <= this.bounds[i]!) {
        this.buckets[i]! += 1;
        return;
      }
    }
  }

  reset(): void {
    this.count = 0;
    this.sum = 0;
    this.buckets.fill(0);
  }
}
