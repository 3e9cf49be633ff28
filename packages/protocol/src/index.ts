// @svcrouter/protocol: the wire protocol the agent and the edge share (framing, the multiplexer
// and its streams, control messages, header rules, the error catalog), and the tunnel policy with
// the credential helpers both sides use (password hashes, a constant-time compare). See README.md here.
// May use: no other package of ours; the agent, the SDK and the server all build on it.
export * from './frame.js';
export * from './mux.js';
export * from './stream-duplex.js';
export * from './socket-pipe.js';
export * from './stream-transport.js';
export * from './callback-stream.js';
export * from './mux-window.js';
export * from './messages.js';
export * from './policy.js';
export * from './traffic-policy.js';
export * from './rule-regex.js';
export * from './handshake.js';
export * from './headers.js';
export * from './errors.js';
export * from './version.js';
export * from './id-table.js';
export * from './liveness.js';
export * from './tcp.js';
export * from './routes.js';
export * from './same-text.js';
export * from './peer-read.js';
