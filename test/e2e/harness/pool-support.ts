import { EventEmitter } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { visit, type TestServer } from './index.js';

/** A local service of one pool member: answers `member <name>`; `/held` waits until `release()` (and emits 'held'). */
export interface MemberService {
  name: string;
  port: number;
  /** Requests it answered or holds. */
  seen: number;
  events: EventEmitter;
  /** Answers every request `/held` holds, then no longer holds new ones. */
  release(): void;
  close(): Promise<void>;
}

/** Starts a member's local service on a free loopback port. */
export async function startMemberService(name: string): Promise<MemberService> {
  const events = new EventEmitter();
  const held: http.ServerResponse[] = [];
  let holding = true;
  const service: MemberService = {
    name,
    port: 0,
    seen: 0,
    events,
    release() {
      holding = false;
      for (const res of held.splice(0)) res.end(`member ${name}`);
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server = http.createServer((req, res) => {
    service.seen++;
    req.resume();
    if (req.url === '/held' && holding) {
      held.push(res);
      events.emit('held');
      return;
    }
    res.end(`member ${name}`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  service.port = (server.address() as AddressInfo).port;
  return service;
}

/** A free loopback port with nothing listening on it (a local service that is down). */
export async function closedPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Visits `host` `count` times one after another; returns the answers' bodies (a non-200 fails). */
export async function sequentialGets(server: TestServer, host: string, count: number, path = '/'): Promise<string[]> {
  const bodies: string[] = [];
  for (let i = 0; i < count; i++) {
    const answer = await visit(server, host, path);
    if (answer.status !== 200) throw new Error(`request ${i} answered ${answer.status}: ${answer.text.slice(0, 200)}`);
    bodies.push(answer.text);
  }
  return bodies;
}

/** How many of `bodies` each member answered. */
export function tally(bodies: readonly string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const body of bodies) counts[body] = (counts[body] ?? 0) + 1;
  return counts;
}
