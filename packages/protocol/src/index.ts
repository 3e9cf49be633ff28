export * from './frame.js';
export * from './mux.js';
export * from './mux-stream.js';
export * from './messages.js';
export * from './handshake.js';
export * from './headers.js';
export * from './errors.js';
export * from './version.js';
