import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { execWrk, parseWrk, type LoadResult, type LoadSpec } from '../loadgen.js';

// wrk with a Lua script that counts the answers by status, so a reliability run can say what
// each error was: wrk's own summary lumps socket errors, its timeouts and non-2xx answers
// together as "errors".

/** What went wrong, by kind. Socket errors are as wrk sees them from the visitor's side. */
export interface ErrorKinds {
  /** connect() failed: refused or reset while connecting (the edge's listener). */
  connect: number;
  /** read() failed or the connection closed before a whole response: the edge closed or reset it. */
  read: number;
  /** write() failed: the edge had closed the connection. */
  write: number;
  /** No response within wrk's --timeout: counted by the client, the request may still complete. */
  timeout: number;
  /** Answers outside 2xx/3xx, by status code. */
  status: Record<string, number>;
}

export interface ClassifiedResult extends LoadResult {
  kinds: ErrorKinds;
}

export interface ClassifiedSpec extends LoadSpec {
  /** Pause of each connection before its next request, in ms; 0 runs as fast as answers come. */
  delayMs: number;
  /** wrk's --timeout, in seconds. */
  timeoutS: number;
  /** A directory for the Lua script. */
  scriptDir: string;
}

/** The Lua script: one counts table per wrk thread (a global: thread:get reads globals), gathered in done(). */
function luaScript(delayMs: number): string {
  return `counts = {}
local threads = {}
function setup(thread) table.insert(threads, thread) end
function response(status, headers, body)
  local key = tostring(status)
  counts[key] = (counts[key] or 0) + 1
end
${delayMs > 0 ? `function delay() return ${delayMs} end` : ''}
function done(summary, latency, requests)
  for _, thread in ipairs(threads) do
    for status, n in pairs(thread:get("counts")) do io.write(string.format("status %s %d\\n", status, n)) end
  end
end
`;
}

/** Parses the socket errors of wrk's summary and the script's status lines. */
export function parseKinds(out: string): ErrorKinds {
  const socket = out.match(/Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/);
  const status: Record<string, number> = {};
  for (const match of out.matchAll(/^status (\d+) (\d+)$/gm)) {
    const code = match[1]!;
    if (Number(code) >= 400 || Number(code) < 200) status[code] = (status[code] ?? 0) + Number(match[2]);
  }
  const [connect, read, write, timeout] = socket ? socket.slice(1, 5).map(Number) : [0, 0, 0, 0];
  return { connect: connect!, read: read!, write: write!, timeout: timeout!, status };
}

/** One wrk run (1 thread) with the counting script. */
export function runClassified(spec: ClassifiedSpec): Promise<ClassifiedResult> {
  const script = path.join(spec.scriptDir, `classify-${spec.delayMs}.lua`);
  writeFileSync(script, luaScript(spec.delayMs));
  return execWrk(spec, ['--timeout', `${spec.timeoutS}s`, '-s', script]).then((stdout) => ({
    ...parseWrk(stdout),
    kinds: parseKinds(stdout),
  }));
}

/** "none", or e.g. "timeout 3, read 1, status 502 ×2". */
export function describeKinds(kinds: ErrorKinds): string {
  const parts: string[] = [];
  for (const key of ['connect', 'read', 'write', 'timeout'] as const) if (kinds[key] > 0) parts.push(`${key} ${kinds[key]}`);
  for (const [code, n] of Object.entries(kinds.status)) parts.push(`status ${code} ×${n}`);
  return parts.length === 0 ? 'none' : parts.join(', ');
}
