import type { Socket } from 'node:net';
import type { IdTable } from '@svcrouter/protocol';

/**
 * Destroys connections the edge has ended (FIN sent) whose peer keeps its side open and takes
 * nothing more of what is queued for it: ending alone leaves such a socket held for ever, and a
 * client that never reads can pile them up (a 400 after the headers timeout, a response that
 * closes the connection). A socket still draining to a reader that keeps up is let finish.
 *
 * One timer for all connections rather than one per socket: every `graceMs` it looks at the
 * open connections; a socket that was ended at the previous look and has since sent nothing
 * more is destroyed, so it is gone between one and two graces after it stalled.
 */
export class EndedSocketReaper {
  /** Ended sockets at the previous look, with the bytes they still had queued then. */
  private ended = new Map<Socket, number>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly sockets: IdTable<Socket>,
    graceMs: number,
  ) {
    this.timer = setInterval(() => this.sweep(), graceMs);
    this.timer.unref();
  }

  /** Stops looking. */
  stop(): void {
    clearInterval(this.timer);
    this.ended.clear();
  }

  /** @internal One look at the open connections (the timer's work; tests call it directly). */
  sweep(): void {
    const previous = this.ended;
    const next = new Map<Socket, number>();
    for (const socket of this.sockets.snapshot()) {
      if (!socket.writableEnded || socket.destroyed) continue;
      const queued = socket.writableLength;
      const before = previous.get(socket);
      // Written out and waiting only for the peer's FIN, or nothing taken since the last look.
      if (before !== undefined && (socket.writableFinished || queued >= before)) socket.destroy();
      else next.set(socket, queued);
    }
    this.ended = next;
  }
}
