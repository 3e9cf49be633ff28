// @svcrouter/testkit (private, never published): child processes for the tests and the benchmark,
// and the metering load's helpers.
// May use: no other package of ours; only tests, test/e2e and bench use it.
export {
  freePort,
  pollUntil,
  Proc,
  spawnNode,
  startProcess,
  tempDir,
  type Exit,
  type ProcOptions,
  type RunningProcess,
  type SpawnNodeOptions,
} from './processes.js';
export { inLanes } from './lanes.js';
export { sendBody } from './upload.js';
export { maxInWindow } from './window.js';
