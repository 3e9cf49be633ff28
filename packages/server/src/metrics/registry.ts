// A tiny Prometheus registry: counters and gauges, rendered in the text exposition format
// (version 0.0.4). No dependency; enough for a handful of families.

/** Content-Type of `render()`'s output. */
export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** Label names to values; rendered in the order given. */
export type Labels = Readonly<Record<string, string>>;

interface Sample {
  labels: Labels | undefined;
  value: number;
}

interface Family {
  name: string;
  help: string;
  type: 'counter' | 'gauge';
  samples(): Iterable<Sample>;
}

/** A monotonically increasing count, optionally split by labels. */
export class Counter {
  private readonly values = new Map<string, Sample>();

  /** Adds `by` (default 1) to the series of `labels`. */
  inc(labels?: Labels, by = 1): void {
    this.series(labels).inc(by);
  }

  /** A handle on one series (created at 0): hot paths resolve labels once, then only add. */
  series(labels?: Labels): { inc(by?: number): void } {
    const key = labels === undefined ? '' : labelText(labels);
    let sample = this.values.get(key);
    if (!sample) {
      sample = { labels, value: 0 };
      this.values.set(key, sample);
    }
    const target = sample;
    return {
      inc(by = 1) {
        target.value += by;
      },
    };
  }

  /** @internal */
  samples(): Iterable<Sample> {
    return this.values.values();
  }
}

/** The registry: families in registration order. */
export class Registry {
  private readonly families: Family[] = [];

  /** A counter this process increments. */
  counter(name: string, help: string): Counter {
    const counter = new Counter();
    this.families.push({ name, help, type: 'counter', samples: () => counter.samples() });
    return counter;
  }

  /** A counter or gauge whose value is read from elsewhere at render time. */
  collect(name: string, help: string, type: 'counter' | 'gauge', read: () => number | Iterable<Sample>): void {
    this.families.push({
      name,
      help,
      type,
      samples: () => {
        const value = read();
        return typeof value === 'number' ? [{ labels: undefined, value }] : value;
      },
    });
  }

  /** Every family in the text exposition format. */
  render(): string {
    const lines: string[] = [];
    for (const family of this.families) {
      lines.push(`# HELP ${family.name} ${family.help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')}`);
      lines.push(`# TYPE ${family.name} ${family.type}`);
      for (const sample of family.samples()) {
        const labels = sample.labels === undefined ? '' : `{${labelText(sample.labels)}}`;
        lines.push(`${family.name}${labels} ${formatValue(sample.value)}`);
      }
    }
    return `${lines.join('\n')}\n`;
  }
}

function labelText(labels: Labels): string {
  return Object.entries(labels)
    .map(([name, value]) => `${name}="${value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"')}"`)
    .join(',');
}

function formatValue(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return '+Inf';
  if (value === -Infinity) return '-Inf';
  return String(value);
}
