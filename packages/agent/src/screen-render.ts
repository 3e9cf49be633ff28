import pc from 'picocolors';

/** picocolors' palette, with colours on or off. */
type Colors = ReturnType<typeof pc.createColors>;
import { SVC_VERSION } from '@svcrouter/protocol';
import { clock, printable } from './output.js';
import type { ScreenModel } from './screen-model.js';

/** Width of the label column. */
const LABEL_WIDTH = 16;

/** Terminal size the screen must fit in. */
export interface ScreenSize {
  columns: number;
  rows: number;
}

/**
 * Draws the live screen as text: each line cut to the terminal width before it is coloured
 * (so colour codes never count against the width), and only as many requests as fit the height.
 */
export function renderScreen(model: ScreenModel, size: ScreenSize, color = pc.isColorSupported): string {
  const paint = pc.createColors(color);
  const width = Math.max(20, size.columns);
  const lines: string[] = [];
  const row = (label: string, value: string, tint: (text: string) => string = (text) => text): void => {
    lines.push(tint(fit(`${label.padEnd(LABEL_WIDTH)}${value}`, width)));
  };
  lines.push(paint.bold(fit('svc', width - 20).padEnd(Math.max(0, width - 20))) + paint.dim(fit('(Ctrl+C to quit)', 20)));
  lines.push('');
  const stateTint = model.state === 'online' ? paint.green : model.state === 'closed' ? paint.red : paint.yellow;
  row('Session Status', model.state, stateTint);
  const { account, plan, rttMs, inspector } = model.status;
  row('Account', account === undefined ? '…' : `${account}${plan ? ` (Plan: ${plan})` : ''}`);
  row('Version', SVC_VERSION);
  row('Latency', rttMs === undefined ? '-' : `${Math.max(1, Math.round(rttMs))}ms`);
  if (inspector !== undefined) row('Web Interface', inspector);
  for (const tunnel of model.tunnels) {
    row('Forwarding', `${tunnel.url} -> ${tunnel.local}${tunnel.name ? ` (${tunnel.name})` : ''}`);
    for (const route of tunnel.routes ?? []) row('Forwarding', `${tunnel.url}${route.path} -> ${route.local}`);
  }
  lines.push('');
  row('Connections', `${'total'.padEnd(8)}${'open'.padEnd(8)}rate/s`);
  row('', `${String(model.total).padEnd(8)}${String(Math.max(0, model.status.open ?? 0)).padEnd(8)}${model.rate().toFixed(2)}`);
  lines.push('');
  lines.push(paint.bold(fit('HTTP Requests', width)));
  lines.push(fit('-------------', width));
  const room = Math.max(0, size.rows - lines.length - 1);
  for (const { at, tunnel, log } of model.recent.slice(0, room)) {
    const status = String(log.status);
    const before = `${clock(at.getTime())} ${tunnel ? `[${tunnel}] ` : ''}${printable(log.method).padEnd(7)}`;
    const after = `${Math.round(log.durationMs)}ms`;
    // The path gives way first: time, method, status and duration always show.
    const pathRoom = Math.max(1, width - before.length - status.length - after.length - 3);
    const path = fit(printable(log.path), pathRoom).padEnd(Math.min(pathRoom, 32));
    lines.push(fit(`${before}${path} `, width - status.length - after.length - 2) + statusTint(paint, log.status)(status) + `  ${after}`);
  }
  return lines.join('\n');
}

/** Colour by status class: 2xx green, 3xx cyan, 4xx yellow, 5xx (and the agent's 502/499) red. */
function statusTint(paint: Colors, status: number): (text: string) => string {
  if (status >= 500) return paint.red;
  if (status >= 400) return paint.yellow;
  if (status >= 300) return paint.cyan;
  return paint.green;
}

/** Cuts `text` to `width` characters, ending in an ellipsis when cut. */
export function fit(text: string, width: number): string {
  if (width <= 0) return '';
  return text.length <= width ? text : `${text.slice(0, width - 1)}…`;
}
