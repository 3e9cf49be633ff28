import { ResetCode, StreamResetError, streamDuplex, type RequestHead, type StreamDuplex } from '@svcrouter/protocol';
import type { Binding } from '../edge/index.js';

/**
 * On the node holding a TCP (or TLS passthrough) tunnel's agent: carries one visitor connection
 * a peer node took on its port into the agent's session. The head goes on as the peer built it
 * (its `a` is the visitor's own address, so the agent's PROXY protocol header and log name the
 * visitor, not the peer node); a pool's member other than the route's gets its own tunnel id.
 * No HTTP rule applies, as on the node a visitor enters directly. Bytes are piped both ways
 * between the two streams, so flow control is end to end and each direction's end (FIN)
 * travels on its own; resets cross with their codes, so the peer records the outcome the agent
 * gave. The peer writes the record and meters the bytes; this node does neither (counted once).
 */
export function relayTcpToAgent(peer: StreamDuplex, head: RequestHead, binding: Binding | undefined): void {
  if (binding === undefined || binding.session.isClosed) return peer.reset(ResetCode.STREAM_FAILED);
  let agent: StreamDuplex;
  try {
    agent = streamDuplex(binding.session.mux.open(binding.tunnelId === head.t ? head : { ...head, t: binding.tunnelId }));
  } catch {
    // The session closed between the lookup and the open.
    return peer.reset(ResetCode.STREAM_FAILED);
  }
  // A pool spreads connections by how many each member has open: this one counts here until it closes.
  const member = binding.pool !== undefined ? binding : undefined;
  if (member !== undefined) member.inFlight = (member.inFlight ?? 0) + 1;
  agent.once('close', () => {
    if (member !== undefined) member.inFlight = (member.inFlight ?? 1) - 1;
  });
  agent.on('headers', (meta: unknown) => peer.sendHeaders(meta));
  agent.on('error', (error: Error) => peer.reset(codeOf(error)));
  peer.on('error', (error: Error) => agent.reset(codeOf(error)));
  // A side reset here (not by its own peer) closes without an error: the other side is reset too.
  agent.on('close', () => {
    if (!peer.destroyed && agent.resetCode !== undefined) peer.reset(agent.resetCode);
  });
  peer.on('close', () => {
    if (!agent.destroyed && peer.resetCode !== undefined) agent.reset(peer.resetCode);
  });
  peer.pipe(agent);
  agent.pipe(peer);
}

/**
 * Whether `binding` is a TCP or TLS passthrough tunnel's. Only those take a TCP head raw: an HTTP
 * tunnel's request that looks like one (a method `TCP` with an upgrade) keeps its access rules.
 */
export function carriesRawBytes(binding: Binding): boolean {
  return binding.proto === 'tls' || binding.url.startsWith('tcp://');
}

function codeOf(error: Error): string {
  return error instanceof StreamResetError ? error.code : ResetCode.CANCEL;
}
