// The edge's HTTP/1.1 pieces that the repository's benchmark (bench/) reuses for its floor
// experiment, exported as `@svcrouter/server/bench` so bench never reaches into dist/.
// Not an API for anything outside this repository.
export { HAND_OVER, INCOMPLETE, readRequestHead } from './edge/lean/request-head.js';
export { BodyFraming, visitorResponseHead, type VisitorResponseHead } from './edge/lean/response-head.js';
export { MAX_HEADER_BYTES } from './edge/listeners.js';
export { requestHead, responseHeaders } from './edge/forwarding.js';
