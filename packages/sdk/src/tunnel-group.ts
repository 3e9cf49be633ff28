import type { AgentSession } from './agent-session.js';
import type { AccessOptions } from './access.js';
import {
  bindChecked,
  checkedTunnelSpec,
  holdOnSecondNode,
  openEdge,
  openMany,
  type ForwardOptions,
  type GroupTunnelSpec,
  type OpenEdge,
} from './forward.js';
import type { Tunnel } from './tunnel.js';

/** Options shared by every tunnel of a group: where to dial and how. */
export type GroupOptions = Omit<ForwardOptions, keyof GroupTunnelSpec | keyof AccessOptions>;

/** One tunnel of a group. */
export type GroupTunnelOptions = GroupTunnelSpec;

/**
 * The tunnels of one agent process over one session, which grows and shrinks while it runs: an
 * agent API adds a tunnel to the live session and closes one. Long-lived state, hence a class.
 *
 * The session closes itself when its last tunnel goes; the next add() then dials a new one, so a
 * group with no tunnels holds no connection. Adds run one at a time, in call order: a bind's
 * answer (or refusal) is known before the next starts, and a first add never races a second
 * into two sessions; removals take their turn in the same line.
 */
export class TunnelGroup {
  private queue: Promise<unknown> = Promise.resolve();

  private constructor(
    private readonly common: GroupOptions,
    private edge: OpenEdge,
    private standby: AgentSession | undefined,
  ) {}

  /**
   * Binds `tunnels` over one new session, all or nothing (as forwardMany), and returns the group
   * holding them. Rejects with SvcError as forward() does.
   */
  static async open(common: GroupOptions, tunnels: GroupTunnelOptions[]): Promise<{ group: TunnelGroup; tunnels: Tunnel[] }> {
    const { edge, tunnels: bound, standby } = await openMany(common, tunnels);
    return { group: new TunnelGroup(common, edge, standby), tunnels: bound };
  }

  /** Round trip to the edge of the current session, ms; undefined while disconnected. */
  get rttMs(): number | undefined {
    return this.edge.session.rttMs;
  }

  /**
   * Binds one more tunnel over the group's session (a new session when the last one closed with
   * its last tunnel). Rejects with SvcError: NAME_INVALID for a bad address or host header,
   * TUNNEL_LIMIT, NAME_TAKEN…, or SESSION_CLOSED while the session is reconnecting.
   */
  add(spec: GroupTunnelOptions): Promise<Tunnel> {
    const next = this.queue.then(() => this.addNow(spec));
    this.queue = next.catch(() => undefined);
    return next;
  }

  /**
   * Closes `tunnel`, in turn with adds: a close that empties the session (which then closes) and
   * an add never interleave, so a new tunnel is never bound on a session in the middle of closing.
   */
  remove(tunnel: Tunnel): Promise<void> {
    const next = this.queue.then(() => tunnel.close());
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async addNow(spec: GroupTunnelOptions): Promise<Tunnel> {
    const checked = await checkedTunnelSpec(spec);
    if (this.edge.session.tunnelCount === 0) {
      // The previous session closed with its last tunnel: dial afresh, once (the caller retries).
      this.edge = await openEdge({ ...this.common, startAttempts: 1 });
      this.standby = undefined;
    }
    const tunnel = await bindChecked(this.edge, spec, checked);
    if (this.standby === undefined) this.standby = holdOnSecondNode(this.edge, [tunnel]);
    else tunnel.attachStandby(this.standby, true);
    return tunnel;
  }
}
