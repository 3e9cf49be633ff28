import type { JSX } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import type uPlot from 'uplot';
import { formatBytes } from '../lib/format.js';
import type { DailyUsage } from '../lib/types.js';

const CHART_HEIGHT = 260;

/**
 * Daily transfer (left axis) and requests (right axis) drawn by uPlot, loaded on first use so
 * the other pages do not carry it. Its stylesheet is a bundled file (the CSP forbids inline styles).
 */
export function UsageChart({ days }: { days: DailyUsage[] }): JSX.Element {
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
        // The API lists days newest first; a chart reads left to right.
        const ordered = [...days].sort((a, b) => a.date.localeCompare(b.date));
        const data: uPlot.AlignedData = [
          ordered.map((day) => Date.parse(`${day.date}T00:00:00Z`) / 1000),
          ordered.map((day) => day.bandwidthBytes),
          ordered.map((day) => day.requests),
        ];
        chart = new UPlot(options(element.clientWidth), data, element);
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
  }, [days]);

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

function options(width: number): uPlot.Options {
  return {
    width,
    height: CHART_HEIGHT,
    scales: { x: { time: true }, bytes: { range: (_u, _min, max) => [0, Math.max(max, 1)] }, requests: { range: (_u, _min, max) => [0, Math.max(max, 1)] } },
    series: [
      { label: 'Day', value: (_u, v) => (v === null ? '' : new Date(v * 1000).toISOString().slice(0, 10)) },
      { label: 'Transfer', scale: 'bytes', stroke: '#2563eb', width: 2, fill: 'rgba(37, 99, 235, 0.08)', value: (_u, v) => (v === null ? '' : formatBytes(v)) },
      { label: 'Requests', scale: 'requests', stroke: '#64748b', width: 2, dash: [4, 4] },
    ],
    axes: [
      {},
      { scale: 'bytes', values: (_u, ticks) => ticks.map((tick) => formatBytes(tick)), size: 70 },
      { scale: 'requests', side: 1, grid: { show: false } },
    ],
  };
}
