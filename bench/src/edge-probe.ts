/**
 * Preloaded into the svc-server process by the benchmark (`node --expose-gc --import
 * bench/dist/edge-probe.js …`): answers `mem` over the IPC channel with memory after a
 * forced GC, since the edge cannot be collected from outside, and `profileStart` /
 * `profileStop {file}` with a CPU profile of just the window between them (`--cpu-prof` covers
 * the whole process, start-up and binding included). It touches no server code, and without an
 * IPC channel (a normal start) it does nothing.
 */
import { writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector';
import { gcAndMeasure, serveIpc } from './ipc.js';

let profiler: Session | undefined;

/** Posts one inspector command and resolves with its result. */
function post<T>(session: Session, method: string): Promise<T> {
  return new Promise((resolve, reject) => session.post(method, (error, result) => (error ? reject(error) : resolve(result as T))));
}

serveIpc(
  {
    mem: () => gcAndMeasure(),
    async profileStart() {
      profiler = new Session();
      profiler.connect();
      await post(profiler, 'Profiler.enable');
      await post(profiler, 'Profiler.start');
      return true;
    },
    async profileStop(request) {
      if (!profiler) throw new Error('no profile was started');
      const { profile } = await post<{ profile: unknown }>(profiler, 'Profiler.stop');
      profiler.disconnect();
      profiler = undefined;
      await writeFile(String(request.file), JSON.stringify(profile));
      return true;
    },
  },
  { holdProcess: false },
);
