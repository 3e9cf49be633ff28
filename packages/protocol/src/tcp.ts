import type { RequestHead, ResponseHead } from './messages.js';

// A TCP tunnel's connections travel as the raw streams WebSocket upgrades use after their 101:
// the edge opens a stream with a TCP head, the agent connects to its local service and answers
// with a CONNECTED head (or resets with UPSTREAM_UNREACHABLE), then bytes flow both ways, with
// the mux's flow control and each direction's end (FIN) carried on its own.

/** The `m` of a TCP connection's stream head. */
export const TCP_METHOD = 'TCP';
/** The status of the agent's head once its local connection is up. */
export const TCP_CONNECTED = 200;

/** The OPEN head of one visitor connection to a TCP tunnel. */
export function tcpHead(tunnelId: string, visitor: string, port: number): RequestHead {
  return { m: TCP_METHOD, p: '', h: [], t: tunnelId, u: 1, a: visitor, o: port };
}

/** Whether a stream head is a TCP connection's. */
export function isTcpHead(head: RequestHead): boolean {
  return head.m === TCP_METHOD && head.u === 1;
}

/** The agent's answer once the local connection is up. */
export const TCP_CONNECTED_HEAD: ResponseHead = { s: TCP_CONNECTED, h: [] };
/** TCP_CONNECTED_HEAD as its HEADERS frame carries it: the same for every connection, so encoded once. */
export const TCP_CONNECTED_TEXT = JSON.stringify(TCP_CONNECTED_HEAD);
