import ansiEscapes from 'ansi-escapes';
import { createLogUpdate } from 'log-update';
import { formatFailure, type Failure } from './failure.js';
import { failoverLine, restoredLine, type Output } from './output.js';
import { ScreenModel } from './screen-model.js';
import { renderScreen } from './screen-render.js';

/** Least time between two redraws, ms: requests under load redraw at most this often. */
const REDRAW_MIN_INTERVAL_MS = 100;

/**
 * The live screen on a terminal, like ngrok's: drawn in the terminal's alternate buffer so that
 * leaving (Ctrl-C, a failure, an exit) puts back exactly what was on the terminal before.
 * Failures are printed after leaving, on stderr, so they stay visible.
 */
export function screenOutput(stdout: NodeJS.WriteStream, stderr: NodeJS.WritableStream): Output {
  const model = new ScreenModel();
  // log-update's own cursor hiding installs signal handlers that re-raise SIGINT and kill the
  // process before the tunnels close; the screen hides and shows the cursor itself instead.
  const draw = createLogUpdate(stdout, { showCursor: true });
  let entered = false;
  let left = false;
  let pending: NodeJS.Timeout | undefined;
  let lastDrawMs = -Infinity;
  const notes: string[] = [];

  const redrawNow = (): void => {
    pending = undefined;
    if (!entered || left) return;
    lastDrawMs = performance.now();
    const size = { columns: stdout.columns || 80, rows: stdout.rows || 24 };
    const body = renderScreen(model, size);
    draw(notes.length === 0 ? body : `${body}\n\n${notes.join('\n')}`);
  };
  const redraw = (): void => {
    if (pending !== undefined) return;
    const wait = lastDrawMs + REDRAW_MIN_INTERVAL_MS - performance.now();
    pending = setTimeout(redrawNow, Math.max(0, wait));
  };
  const restore = (): void => {
    if (!entered || left) return;
    left = true;
    if (pending !== undefined) clearTimeout(pending);
    draw.clear();
    draw.done();
    stdout.write(ansiEscapes.exitAlternativeScreen + ansiEscapes.cursorShow);
  };
  const enter = (): void => {
    if (entered) return;
    entered = true;
    stdout.write(ansiEscapes.enterAlternativeScreen + ansiEscapes.cursorTo(0, 0) + ansiEscapes.cursorHide);
    stdout.on('resize', redrawNow);
    // Whatever ends the process, the terminal gets its screen and cursor back.
    process.once('exit', restore);
  };
  const printAfter = (failure: Failure | undefined, line?: string): void => {
    restore();
    if (failure) stderr.write(`${formatFailure(failure)}\n`);
    else if (line) stderr.write(`${line}\n`);
  };

  function note(text: string): void {
    if (!entered) return void stdout.write(`${text}\n`);
    notes.push(text);
    redraw();
  }

  return {
    started(tunnels) {
      model.tunnels = tunnels;
      model.state = 'online';
      enter();
      redrawNow();
    },
    added(tunnel) {
      model.tunnels.push(tunnel);
      redraw();
    },
    removed(tunnel) {
      model.tunnels = model.tunnels.filter((known) => known !== tunnel && known.name !== tunnel.name);
      redraw();
    },
    request(tunnel, log) {
      model.addRequest(tunnel, log);
      redraw();
    },
    connection(tunnel, log) {
      // Listed as a request: TCP, the visitor, and 200 or 502 as the edge's inspector records it.
      model.addRequest(tunnel, {
        method: tunnel.url.startsWith('tls://') ? 'TLS' : 'TCP',
        path: log.visitor,
        status: log.outcome === 'refused' ? 502 : 200,
        durationMs: log.durationMs,
      });
      if (log.detail !== undefined && log.outcome === 'closed') note(`hint: ${log.detail}`);
      else redraw();
    },
    reconnecting() {
      model.state = 'reconnecting';
      redraw();
    },
    reconnected(tunnel) {
      model.state = 'online';
      const index = model.tunnels.findIndex((known) => known.name === tunnel.name);
      if (index >= 0) model.tunnels[index] = tunnel;
      redraw();
    },
    failover(lost, reason) {
      note(failoverLine(lost, reason));
    },
    restored(server) {
      note(restoredLine(server));
    },
    closed(failure, released) {
      model.state = 'closed';
      printAfter(failure, released);
    },
    failure: (failure) => printAfter(failure),
    warning(failure) {
      if (!entered) return void stderr.write(`${formatFailure(failure)}\n`);
      notes.push(failure.sentence, `hint: ${failure.hint}`);
      redraw();
    },
    inspecting(url) {
      model.status = { ...model.status, inspector: url };
      redraw();
    },
    status(status) {
      model.status = { ...model.status, ...status };
      redraw();
    },
    info: note,
    error: (text) => stderr.write(`${text}\n`),
    flush: () => restore(),
  };
}
