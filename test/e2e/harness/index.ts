export {
  startServer,
  withRestartableServer,
  startAgent,
  spawnAgent,
  runAgent,
  type TestServer,
  type TestAgent,
  type ServerOptions,
  type AgentOptions,
} from './server.js';
export {
  startOrigin,
  patternBlock,
  patternChunk,
  patternSha256,
  PATTERN_CHUNK_BYTES,
  type TestOrigin,
  type OriginActivity,
} from './origin.js';
export { visit, api, edgeUrl, loopbackLookup, type VisitOptions, type VisitResult } from './visitor.js';
export { Proc, spawnNode, splitFailure, tempDir, REPO_ROOT, SERVER_BIN, AGENT_BIN } from './processes.js';
export { originSuite, serverSuite, tunnelSuite, type ServerSystem, type TunnelSystem } from './suite.js';
