import type { Row } from './row.js';
import type { TcpFigure, TcpResult } from './w-tcp.js';

const MIB = 1024 * 1024;

/** 1 GiB, 256 MiB, 64 KiB: as --tcp-bytes takes it. */
export function sizeLabel(bytes: number): string {
  const [unit, name] = bytes >= 1024 * MIB ? [1024 * MIB, 'GiB'] : bytes >= MIB ? [MIB, 'MiB'] : [1024, 'KiB'];
  return `${Number((bytes / unit).toFixed(2))} ${name}`;
}

/** A figure's row fields: direct, svcRouter, ssh and both ratios. */
function sides(f: TcpFigure): Pick<Row, 'direct' | 'tunnel' | 'ratio' | 'ssh' | 'sshRatio'> {
  return { direct: f.direct, tunnel: f.tunnel, ratio: f.ratio, ssh: f.ssh, sshRatio: f.sshRatio };
}

/** Throughput goal: within 0.8× of direct and ahead of ssh (when ssh ran). */
function throughputMet(f: TcpFigure): boolean {
  return f.ratio >= 0.8 && (f.sshRatio === null || f.sshRatio > 1);
}

/** The TCP rows, each with an `ssh` column and its ratio (rows without `ssh` are the HTTP table's). */
export function tcpRows(r: TcpResult): Row[] {
  const size = sizeLabel(r.bytes);
  const cpu = (id: string, c: { tunnel: number; ssh: number | null }, unit = 's/GiB'): Row => ({
    id,
    metric: `… CPU of the relays, ${unit} (edge + agent; ssh + sshd)`,
    direct: null,
    tunnel: c.tunnel,
    ratio: null,
    ssh: c.ssh,
    sshRatio: c.ssh === null || c.ssh <= 0 ? null : c.tunnel / c.ssh,
    goal: '—',
    met: null,
  });
  // prettier-ignore
  return [
    { id: 'tcp_download_mib_s', metric: `TCP download ${size} (service → client), MiB/s`, ...sides(r.download), goal: '≥ 0.8 × direct, > ssh', met: throughputMet(r.download) },
    cpu('tcp_download_cpu_s_gib', r.downloadCpuSPerGiB),
    { id: 'tcp_upload_mib_s', metric: `TCP upload ${size} (client → service), MiB/s`, ...sides(r.upload), goal: '≥ 0.8 × direct, > ssh', met: throughputMet(r.upload) },
    cpu('tcp_upload_cpu_s_gib', r.uploadCpuSPerGiB),
    {
      id: 'tcp_connections_per_s', metric: `TCP connections per second (connect, 1 byte each way, close; ${r.connections.count} at ${r.connections.concurrency} at once${r.connections.warmup ? ` after ${r.connections.warmup} unrecorded` : ''})`,
      ...sides(r.connections.perS), goal: '> ssh', met: r.connections.perS.sshRatio === null ? null : r.connections.perS.sshRatio > 1,
    },
    ...(r.connectionsCpuUs ? [cpu('tcp_connections_cpu_us', r.connectionsCpuUs, 'µs per connection')] : []),
    { id: 'tcp_echo_rtt_ms', metric: `TCP echo RTT (1 byte, ${r.echo.trips} round trips), median, ms`, ...sides(r.echo.medianMs), goal: '—', met: null },
    { id: 'tcp_echo_rtt_p99_ms', metric: 'TCP echo RTT, p99, ms', ...sides(r.echo.p99Ms), goal: '—', met: null },
  ];
}

/** Whether a row is one of the TCP table's (it carries an ssh column). */
export function isTcpRow(row: Row): boolean {
  return row.ssh !== undefined;
}

/** The TCP rows as their own markdown table: direct, ssh -L, svcRouter and both ratios. */
export function tcpMarkdown(rows: readonly Row[], result: TcpResult, fmt: (value: number | null) => string): string {
  const ratio = (value: number | null | undefined): string => (value === null || value === undefined ? '—' : `${value.toFixed(2)}×`);
  const sshNote =
    'cipher' in result.ssh ? `ssh -L with OpenSSH's default cipher (${result.ssh.cipher})` : `ssh -L skipped: ${result.ssh.skipped}`;
  const lines = [
    '### TCP tunnels (`svc tcp`)',
    '',
    `- One local TCP service reached directly, through \`svc tcp\` (this run's edge and a plain agent session on loopback) and through ${sshNote} via a throwaway sshd on loopback, both forwarding to \`${result.localHost ?? '127.0.0.1'}\`; ${result.rounds} round(s), the order rotating; medians, and ratios as medians of the per-round ratios.`,
    '',
    '| metric | direct | ssh -L | svcRouter | ÷ direct | ÷ ssh | goal | met? |',
    '|---|---:|---:|---:|---:|---:|---|:---:|',
  ];
  for (const row of rows) {
    const met = row.met === null ? '' : row.met ? 'yes' : '**no**';
    lines.push(
      `| ${row.metric} | ${fmt(row.direct)} | ${fmt(row.ssh ?? null)} | ${fmt(row.tunnel)} | ${ratio(row.ratio)} | ${ratio(row.sshRatio)} | ${row.goal} | ${met} |`,
    );
  }
  return lines.join('\n');
}
