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
export { sendBody } from './upload.js';
export { maxInWindow } from './window.js';
