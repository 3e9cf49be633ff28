/**
 * Preloaded into the svc-server process by the benchmark (`node --expose-gc --import
 * bench/dist/edge-probe.js …`): answers `mem` over the IPC channel with memory after a
 * forced GC, since the edge cannot be collected from outside. It touches no server code,
 * and without an IPC channel (a normal start) it does nothing.
 */
import { gcAndMeasure, serveIpc } from './ipc.js';

serveIpc({ mem: () => gcAndMeasure() });
