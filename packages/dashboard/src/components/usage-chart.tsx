import type { JSX } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import type uPlot from 'uplot';
import { formatBytes } from '../lib/format.js';
import type { DailyUsage } from '../lib/types.js';

const CHART_HEIGHT = 260;
const DAY_MS = 86_400_000;
/** Smallest top of each axis, so a quiet month is not drawn as fractions of a byte or a request. */
const MIN_TOP_BYTES = 1024;
const MIN_TOP_REQUESTS = 10;

/**
 * Daily transfer (left axis) and requests (right axis) drawn by uPlot, loaded on first use so
 * the other pages do not carry it. Its stylesheet is a bundled file (the CSP forbids inline styles).
 */
export function UsageChart({ days, from, to }: { days: DailyUsage[]; from: string; to: string }): JSX.Element {
  const box = useRef<HTMLDivElement>(null);
  const [failed, setFailed] = useState<string | undefined>(undefined);

  useEffect(() => {
    let chart: uPlot | undefined;
    let observer: ResizeObserver | undefined;
    let cancelled = false;
    Promise.all([import('uplot'), import('uplot/dist/uPlot.min.css')]).then(
      ([{ default: UPlot }]) => {
        const element = box.current;
        if (cancelled || !element) return;
        const ordered = everyDay(days, from, to);
        const data: uPlot.AlignedData = [
          ordered.map((day) => Date.parse(`${day.date}T00:00:00Z`) / 1000),
          ordered.map((day) => day.bandwidthBytes),
          ordered.map((day) => day.requests),
        ];
        chart = new UPlot(options(element.clientWidth, UPlot.paths.bars?.({ size: [0.6, 24] })), data, element);
        observer = new ResizeObserver(() => chart?.setSize({ width: element.clientWidth, height: CHART_HEIGHT }));
        observer.observe(element);
      },
      () => setFailed('the chart could not be loaded; reload the page'),
    );
    return () => {
      cancelled = true;
      observer?.disconnect();
      chart?.destroy();
    };
  }, [days, from, to]);

  return (
    <figure class="chart">
      <div ref={box} role="img" aria-label="Daily transfer and requests" />
      {failed && <p class="error">{failed}</p>}
      <figcaption class="sr-only">
        {days.map((day) => `${day.date}: ${formatBytes(day.bandwidthBytes)}, ${day.requests} requests`).join('; ')}
      </figcaption>
    </figure>
  );
}

/**
 * One entry per day from `from` to `to`, oldest first (a chart reads left to right): the API
 * lists only days with traffic, newest first, and a quiet day is a zero, not a gap.
 */
function everyDay(days: DailyUsage[], from: string, to: string): DailyUsage[] {
  const byDate = new Map(days.map((day) => [day.date, day]));
  const all: DailyUsage[] = [];
  for (let time = Date.parse(`${from}T00:00:00Z`); time <= Date.parse(`${to}T00:00:00Z`); time += DAY_MS) {
    const date = new Date(time).toISOString().slice(0, 10);
    all.push(byDate.get(date) ?? { date, bandwidthBytes: 0, requests: 0, peakTunnels: 0 });
  }
  return all;
}

/** Transfer as one bar per day (`bars` is uPlot's own path builder), requests as a line. */
function options(width: number, bars: uPlot.Series.PathBuilder | undefined): uPlot.Options {
  return {
    width,
    height: CHART_HEIGHT,
    scales: {
      x: { time: true },
      bytes: { range: (_u, _min, max) => [0, Math.max(max, MIN_TOP_BYTES)] },
      requests: { range: (_u, _min, max) => [0, Math.max(max, MIN_TOP_REQUESTS)] },
    },
    series: [
      { label: 'Day', value: (_u, v) => (v === null ? '' : new Date(v * 1000).toISOString().slice(0, 10)) },
      {
        label: 'Transfer',
        scale: 'bytes',
        stroke: '#2563eb',
        width: 1,
        fill: 'rgba(37, 99, 235, 0.55)',
        paths: bars,
        points: { show: false },
        value: (_u, v) => (v === null ? '' : formatBytes(v)),
      },
      { label: 'Requests', scale: 'requests', stroke: '#64748b', width: 2, points: { show: false } },
    ],
    axes: [
      {},
      { scale: 'bytes', values: (_u, ticks) => ticks.map((tick) => formatBytes(tick)), size: 70 },
      { scale: 'requests', side: 1, grid: { show: false } },
    ],
  };
}
