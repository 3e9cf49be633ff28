import type { CallbackStream, SvcError } from '@svcrouter/protocol';
import type { BindRequest, Bound, SessionTunnel } from './session-tunnel.js';

/** What a tunnel offers the session that holds it on a second edge node. */
export interface StandbyOwner {
  readonly bindRequest: BindRequest;
  handleStream(stream: CallbackStream): void;
  pathDown(path: 'standby', attempt: number, delayMs: number, reason: string, planned: boolean): void;
  pathUp(path: 'standby', url: string): void;
  standbyEnded(error: SvcError): void;
}

/**
 * A tunnel as its second connection sees it (SVC_SERVER with several URLs): bound under the exact
 * hostname the first connection got, serving visitors through the same local proxy, and reporting
 * its losses to the tunnel, which decides whether the tunnel as a whole is down.
 */
export class StandbyLink implements SessionTunnel {
  constructor(private readonly owner: StandbyOwner) {}

  get bindRequest(): BindRequest {
    return this.owner.bindRequest;
  }

  handleStream(stream: CallbackStream): void {
    this.owner.handleStream(stream);
  }

  onReconnecting(attempt: number, delayMs: number, reason: string, planned: boolean): void {
    this.owner.pathDown('standby', attempt, delayMs, reason, planned);
  }

  onRebound(bound: Bound): void {
    this.owner.pathUp('standby', bound.url);
  }

  onEnded(error: SvcError): void {
    this.owner.standbyEnded(error);
  }
}
