import type { RequestLog } from '@svcrouter/sdk';
import type { ScreenStatus, TunnelView } from './output.js';

/** Requests kept for the screen's list; the list shows as many as the terminal height allows. */
const RECENT_REQUESTS = 50;
/** Window of the request rate, ms. */
const RATE_WINDOW_MS = 60_000;

/** One request as the screen lists it. */
export interface RecentRequest {
  at: Date;
  tunnel: string;
  log: RequestLog;
}

/** Everything the live screen shows, updated by events and drawn by renderScreen(). */
export class ScreenModel {
  state: 'connecting' | 'online' | 'reconnecting' | 'closed' = 'connecting';
  status: ScreenStatus = {};
  tunnels: TunnelView[] = [];
  total = 0;
  readonly recent: RecentRequest[] = [];
  /** Completion times within RATE_WINDOW_MS, oldest first. */
  private readonly window: number[] = [];

  /** Counts a completed request and keeps it for the list. */
  addRequest(tunnel: TunnelView, log: RequestLog, nowMs = Date.now()): void {
    this.total++;
    this.window.push(nowMs);
    this.recent.unshift({ at: new Date(nowMs), tunnel: tunnel.name, log });
    if (this.recent.length > RECENT_REQUESTS) this.recent.pop();
  }

  /** Requests per second over the last minute. */
  rate(nowMs = Date.now()): number {
    while (this.window.length > 0 && this.window[0]! <= nowMs - RATE_WINDOW_MS) this.window.shift();
    return this.window.length / (RATE_WINDOW_MS / 1000);
  }
}
