import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { requireTools } from '@svcrouter/testkit/tools';
import { startAgent, type TestAgent } from './harness/index.js';
import { ACME_PACKAGES, ACME_TOOLS, addVerified, startDomainWorld, type DomainWorld } from './harness/domains-support.js';
import { ServerEvents, echoClient, type grpc, json, startGrpcServer, unaryCall, type Message } from './harness/grpc-support.js';

// gRPC on a custom domain: TLS with the certificate Pebble issues on the first handshake,
// HTTP/2 end to end to a local gRPC server behind `svc http --proto h2`.

if (requireTools('gRPC on a custom domain (Pebble)', ACME_TOOLS, ACME_PACKAGES)) {
  describe('gRPC through a tunnel on a custom domain', () => {
    let world: DomainWorld;
    let grpcServer: Awaited<ReturnType<typeof startGrpcServer>>;
    let agent: TestAgent;
    let client: grpc.Client;

    before(async () => {
      world = await startDomainWorld({ acme: true });
      grpcServer = await startGrpcServer(new ServerEvents());
      const token = await world.server.createAccount(`grpc-${randomBytes(3).toString('hex')}@example.com`, 'pro');
      const domain = await addVerified(world, token);
      agent = await startAgent(world.server, { token, target: grpcServer.port, domain: domain.host, args: ['--proto', 'h2'] });
      client = echoClient({ ...world.server, caPem: world.root }, domain.host);
    });
    after(async () => {
      client?.close();
      await agent?.close();
      grpcServer?.close();
      await world?.close();
    });

    it('makes unary and server-streaming calls', { timeout: 60_000 }, async () => {
      const { response } = await unaryCall(client, 'Unary', { text: 'custom' });
      assert.equal(response.text, 'echo:custom');
      const call = client.makeServerStreamRequest('/test.Echo/Countdown', json.requestSerialize, json.responseDeserialize, {
        text: 'go',
        n: 3,
      });
      const got: number[] = [];
      for await (const message of call as AsyncIterable<Message>) got.push(message.n!);
      assert.deepEqual(got, [3, 2, 1]);
    });
  });
}
