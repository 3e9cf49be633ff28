import { readFileSync } from 'node:fs';
import { REPO_ROOT } from './proc.js';

/** The parts of a V8 .cpuprofile (from --cpu-prof) this summary reads. */
interface CpuProfile {
  nodes: Array<{ id: number; callFrame: { functionName: string; url: string; lineNumber: number } }>;
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileLine {
  name: string;
  selfMs: number;
  /** Share of busy (non-idle) samples, percent. */
  percent: number;
}

export interface ProfileSummary {
  totalMs: number;
  busyMs: number;
  functions: ProfileLine[];
  /** Self time grouped by where the code lives (our packages, undici, node internals…). */
  areas: ProfileLine[];
}

/** Where a script lives, in one short word-ish label. */
function areaOf(url: string): string {
  if (url === '') return '(native / V8)';
  if (url.startsWith('node:')) return 'node core';
  const local = url.replace(`file://${REPO_ROOT}/`, '');
  const pkg = local.match(/^packages\/([^/]+)\//);
  if (pkg) return `@svcrouter/${pkg[1]}`;
  const dep = local.match(/node_modules\/((?:@[^/]+\/)?[^/]+)\//);
  return dep ? dep[1]! : local;
}

function shortUrl(url: string): string {
  return url.replace(`file://${REPO_ROOT}/`, '').replace(/^.*node_modules\//, '');
}

/**
 * Self time per function: each sample's interval (the delta to the next sample) goes to the
 * function on top of the stack. Functions are merged by name and location; idle time is left
 * out of the percentages so they describe where the busy CPU went.
 */
export function summarizeProfile(file: string, top = 25): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const self = new Map<string, number>();
  const areas = new Map<string, number>();
  let totalUs = 0;
  let idleUs = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const us = profile.timeDeltas[i + 1] ?? 0;
    const frame = byId.get(profile.samples[i]!)?.callFrame;
    if (!frame) continue;
    totalUs += us;
    if (frame.functionName === '(idle)') {
      idleUs += us;
      continue;
    }
    const where = frame.url ? ` ${shortUrl(frame.url)}:${frame.lineNumber + 1}` : '';
    const key = `${frame.functionName || '(anonymous)'}${where}`;
    self.set(key, (self.get(key) ?? 0) + us);
    const area = frame.url === '' && frame.functionName.startsWith('(') ? frame.functionName : areaOf(frame.url);
    areas.set(area, (areas.get(area) ?? 0) + us);
  }
  const busyUs = totalUs - idleUs;
  const lines = (map: Map<string, number>, limit: number): ProfileLine[] =>
    [...map.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, limit)
      .map(([name, us]) => ({ name, selfMs: us / 1000, percent: (100 * us) / Math.max(1, busyUs) }));
  return { totalMs: totalUs / 1000, busyMs: busyUs / 1000, functions: lines(self, top), areas: lines(areas, 12) };
}

/** A summary as markdown: areas, then the top functions by self time. */
export function profileMarkdown(label: string, file: string, summary: ProfileSummary): string {
  const out = [
    `### ${label}: ${summary.busyMs.toFixed(0)} ms busy of ${summary.totalMs.toFixed(0)} ms profiled`,
    `(${file})`,
    '',
    '| area | self ms | % of busy |',
    '|---|---:|---:|',
    ...summary.areas.map((l) => `| ${l.name} | ${l.selfMs.toFixed(0)} | ${l.percent.toFixed(1)} |`),
    '',
    '| function (self time) | self ms | % of busy |',
    '|---|---:|---:|',
    ...summary.functions.map((l) => `| \`${l.name}\` | ${l.selfMs.toFixed(0)} | ${l.percent.toFixed(1)} |`),
  ];
  return out.join('\n');
}
