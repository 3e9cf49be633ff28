import assert from 'node:assert/strict';
import { once } from 'node:events';
import { after, before, describe, it } from 'node:test';
import { serverSuite, startAgent, type TestAgent } from './harness/index.js';
import { ServerEvents, echoClient, grpc, json, startGrpcServer, unaryCall, type Message } from './harness/grpc-support.js';

/** Bounds a hung call; not a timing assertion. */
const HANG = { timeout: 60_000 };

describe('gRPC through the tunnel (svc http --proto h2)', () => {
  const system = serverSuite();
  const events = new ServerEvents();
  let grpcServer: Awaited<ReturnType<typeof startGrpcServer>>;
  let agent: TestAgent;
  let client: grpc.Client;

  before(async () => {
    grpcServer = await startGrpcServer(events);
    agent = await startAgent(system.server, { token: system.server.token, target: grpcServer.port, args: ['--proto', 'h2'] });
    client = echoClient(system.server, agent.hostname);
  });
  after(async () => {
    client?.close();
    await agent?.close();
    grpcServer?.close();
  });

  it('makes a unary call, with the trailing metadata the server sent', HANG, async () => {
    const { response, trailers } = await unaryCall(client, 'Unary', { text: 'hello' });
    assert.equal(response.text, 'echo:hello');
    assert.deepEqual(trailers.get('x-checksum'), ['len-5']);
  });

  it('streams a server-streaming answer', HANG, async () => {
    const call = client.makeServerStreamRequest('/test.Echo/Countdown', json.requestSerialize, json.responseDeserialize, {
      text: 'go',
      n: 5,
    });
    const got: number[] = [];
    for await (const message of call as AsyncIterable<Message>) got.push(message.n!);
    assert.deepEqual(got, [5, 4, 3, 2, 1]);
  });

  it('streams a client-streaming request', HANG, async () => {
    const result = await new Promise<Message>((resolve, reject) => {
      const call = client.makeClientStreamRequest('/test.Echo/Sum', json.requestSerialize, json.responseDeserialize, (error, value) =>
        error ? reject(error) : resolve(value!),
      );
      for (let n = 1; n <= 10; n++) call.write({ text: 'n', n });
      call.end();
    });
    assert.equal(result.n, 55);
  });

  it('carries a bidirectional stream: each answer arrives before the next message is sent', HANG, async () => {
    const call = client.makeBidiStreamRequest('/test.Echo/Chat', json.requestSerialize, json.responseDeserialize);
    for (const text of ['a', 'b', 'c']) {
      call.write({ text });
      const [answer] = (await once(call, 'data')) as [Message];
      assert.equal(answer.text, `re:${text}`);
    }
    call.end();
    await once(call, 'status');
  });

  it('passes an error status from the server (a trailers-only answer)', HANG, async () => {
    await assert.rejects(unaryCall(client, 'Missing', { text: 'x' }), (error: grpc.ServiceError) => {
      assert.equal(error.code, grpc.status.NOT_FOUND);
      assert.equal(error.details, 'no such thing');
      return true;
    });
  });

  it('cancels the call at the server when the client cancels', HANG, async () => {
    const cancelled = once(events, 'cancelled');
    const call = client.makeServerStreamRequest('/test.Echo/Forever', json.requestSerialize, json.responseDeserialize, { text: 'go' });
    call.on('error', () => undefined);
    await once(call, 'data');
    call.cancel();
    assert.deepEqual(await cancelled, ['forever']);
  });

  it('ends a call past its deadline with DEADLINE_EXCEEDED, and the server sees it cancelled', HANG, async () => {
    const cancelled = once(events, 'cancelled');
    await assert.rejects(unaryCall(client, 'Sleep', { text: 'zz' }, { deadline: Date.now() + 300 }), (error: grpc.ServiceError) => {
      assert.equal(error.code, grpc.status.DEADLINE_EXCEEDED);
      return true;
    });
    assert.deepEqual(await cancelled, ['sleep']);
  });

  it('tells a gRPC client of a tunnel without --proto h2 why its call fails', HANG, async () => {
    const h1Agent = await startAgent(system.server, { token: system.server.token, target: grpcServer.port });
    const h1Client = echoClient(system.server, h1Agent.hostname);
    try {
      await assert.rejects(unaryCall(h1Client, 'Unary', { text: 'hello' }), (error: grpc.ServiceError) => {
        assert.equal(error.code, grpc.status.UNAVAILABLE);
        assert.match(error.details, /--proto h2/);
        return true;
      });
    } finally {
      h1Client.close();
      await h1Agent.close();
    }
  });
});
