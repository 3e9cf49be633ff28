// The agent's HTTP/1.1 framing that the repository's benchmark (bench/) reuses for its floor
// experiment, exported as `@svcrouter/sdk/bench` so bench never reaches into dist/.
// Not an API for anything outside this repository.
export { frameRequest, LAST_CHUNK, writeChunk } from './h1-request.js';
export { ResponseParser, type ResponseHandler } from './h1-response-parser.js';
