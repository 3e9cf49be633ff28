import { after, before } from 'node:test';
import { startOrigin, type TestOrigin } from './origin.js';
import { startAgent, startServer, type ServerOptions, type TestAgent, type TestServer } from './server.js';

/** A server, an origin and one agent forwarding to it: the system most suites test. */
export interface TunnelSystem {
  server: TestServer;
  origin: TestOrigin;
  agent: TestAgent;
}

/**
 * Call in a describe() body: starts server, origin and agent before the suite's tests and
 * stops them (agent first) after. The returned object is filled in by the time tests run.
 */
export function tunnelSuite(): TunnelSystem {
  const system = {} as Partial<TunnelSystem>;
  before(async () => {
    system.server = await startServer();
    system.origin = await startOrigin();
    system.agent = await startAgent(system.server, { token: system.server.token, target: system.origin.port });
  });
  after(async () => {
    await system.agent?.close();
    await system.origin?.close();
    await system.server?.close();
  });
  return system as TunnelSystem;
}

/** A server and an origin, for suites that start their own agents. */
export type ServerSystem = Omit<TunnelSystem, 'agent'>;

/** Call in a describe() body: starts a server and an origin before the suite's tests and stops them after. */
export function serverSuite(options: ServerOptions = {}): ServerSystem {
  const system = {} as Partial<ServerSystem>;
  before(async () => {
    system.server = await startServer(options);
    system.origin = await startOrigin();
  });
  after(async () => {
    await system.origin?.close();
    await system.server?.close();
  });
  return system as ServerSystem;
}

/** Call in a describe() body: starts an origin before the suite's tests and stops it after, for suites that start their own servers. */
export function originSuite(): { origin: TestOrigin } {
  const system = {} as { origin: TestOrigin };
  before(async () => {
    system.origin = await startOrigin();
  });
  after(async () => {
    await system.origin?.close();
  });
  return system;
}
