import type { ChildProcess } from 'node:child_process';

/** A command sent to a probe over the IPC channel; the probe answers with the same `id`. */
export interface IpcRequest {
  id: number;
  cmd: string;
  [key: string]: unknown;
}

/** A probe's answer: `result` or `error`. */
export interface IpcReply {
  id: number;
  result?: unknown;
  error?: string;
}

/** Memory figures a probe reports after a forced GC. */
export interface MemorySample {
  heapUsed: number;
  external: number;
  arrayBuffers: number;
  rss: number;
}

/** Request/response calls to a child that runs `serveIpc`. One call at a time is enough here. */
export function ipcClient(child: ChildProcess): (cmd: string, args?: Record<string, unknown>) => Promise<unknown> {
  let nextId = 1;
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  child.on('message', (message: IpcReply) => {
    const waiter = pending.get(message.id);
    if (!waiter) return;
    pending.delete(message.id);
    if (message.error !== undefined) waiter.reject(new Error(message.error));
    else waiter.resolve(message.result);
  });
  child.once('exit', () => {
    for (const waiter of pending.values()) waiter.reject(new Error('probe exited'));
    pending.clear();
  });
  return (cmd, args = {}) =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve, reject });
      child.send({ id, cmd, ...args } satisfies IpcRequest);
    });
}

export interface ServeIpcOptions {
  /**
   * Whether the channel keeps the process alive until the parent disconnects or kills it
   * (default true): a probe whose job is to answer must not end while it waits for its first
   * command (on Node 24 an unref'd one exits before that command is read). A probe preloaded
   * into a process with a life of its own (svc-server) passes false, so that it never holds up
   * that process's graceful stop.
   */
  holdProcess?: boolean;
}

/** Answers IPC commands in a child process; handlers may be async. See ServeIpcOptions. */
export function serveIpc(handlers: Record<string, (request: IpcRequest) => unknown>, options: ServeIpcOptions = {}): void {
  if (!process.send) return;
  process.on('message', (request: IpcRequest) => {
    const handler = handlers[request.cmd];
    Promise.resolve()
      .then(() => {
        if (!handler) throw new Error(`unknown command ${request.cmd}`);
        return handler(request);
      })
      .then(
        (result) => process.send?.({ id: request.id, result } satisfies IpcReply),
        (error: unknown) => process.send?.({ id: request.id, error: String((error as Error)?.stack ?? error) } satisfies IpcReply),
      );
  });
  if (options.holdProcess === false) process.channel?.unref();
}

/** Forces full collections (twice, so weakly held and finalised objects go too) and reads memory. */
export function gcAndMeasure(): MemorySample {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with --expose-gc to measure memory');
  gc();
  gc();
  const usage = process.memoryUsage();
  return { heapUsed: usage.heapUsed, external: usage.external, arrayBuffers: usage.arrayBuffers, rss: usage.rss };
}
