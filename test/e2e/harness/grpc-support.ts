// A gRPC service for the e2e tests, defined at run time (JSON messages, no .proto, no codegen),
// its server behind `svc http --proto h2`, and a client that reaches it through the edge's TLS
// port on the tunnel's hostname.
import { EventEmitter } from 'node:events';
import * as grpc from '@grpc/grpc-js';
import type { TestServer } from './index.js';

/** One message: JSON both ways. */
export interface Message {
  text: string;
  n?: number;
}

const json = {
  requestSerialize: (value: Message) => Buffer.from(JSON.stringify(value)),
  requestDeserialize: (bytes: Buffer) => JSON.parse(bytes.toString('utf8')) as Message,
  responseSerialize: (value: Message) => Buffer.from(JSON.stringify(value)),
  responseDeserialize: (bytes: Buffer) => JSON.parse(bytes.toString('utf8')) as Message,
};

function method(name: string, requestStream: boolean, responseStream: boolean): grpc.MethodDefinition<Message, Message> {
  return { path: `/test.Echo/${name}`, requestStream, responseStream, originalName: name, ...json };
}

/** The service: every kind of call, one that never ends (cancellation) and one that fails. */
export const EchoService = {
  unary: method('Unary', false, false),
  countdown: method('Countdown', false, true),
  sum: method('Sum', true, false),
  chat: method('Chat', true, true),
  forever: method('Forever', false, true),
  sleep: method('Sleep', false, false),
  missing: method('Missing', false, false),
} satisfies grpc.ServiceDefinition;

/** What the server saw: calls cancelled by the client (a visitor that left, a deadline). */
export class ServerEvents extends EventEmitter<{ cancelled: [method: string] }> {}

/** Starts the gRPC server on loopback (plaintext HTTP/2: h2c); resolves with its port. */
export async function startGrpcServer(events: ServerEvents): Promise<{ port: number; close(): void }> {
  const server = new grpc.Server();
  const watch = (call: grpc.ServerWritableStream<Message, Message> | grpc.ServerUnaryCall<Message, Message>, name: string): void => {
    call.on('cancelled', () => events.emit('cancelled', name));
  };
  server.addService(EchoService, {
    unary: (call: grpc.ServerUnaryCall<Message, Message>, callback: grpc.sendUnaryData<Message>) => {
      const trailer = new grpc.Metadata();
      trailer.set('x-checksum', `len-${call.request.text.length}`);
      callback(null, { text: `echo:${call.request.text}` }, trailer);
    },
    countdown: (call: grpc.ServerWritableStream<Message, Message>) => {
      for (let n = call.request.n ?? 0; n > 0; n--) call.write({ text: 'tick', n });
      call.end();
    },
    sum: (call: grpc.ServerReadableStream<Message, Message>, callback: grpc.sendUnaryData<Message>) => {
      let total = 0;
      call.on('data', (message: Message) => (total += message.n ?? 0));
      call.on('end', () => callback(null, { text: 'sum', n: total }));
    },
    chat: (call: grpc.ServerDuplexStream<Message, Message>) => {
      call.on('data', (message: Message) => call.write({ text: `re:${message.text}` }));
      call.on('end', () => call.end());
    },
    forever: (call: grpc.ServerWritableStream<Message, Message>) => {
      watch(call, 'forever');
      call.write({ text: 'first' });
    },
    sleep: (call: grpc.ServerUnaryCall<Message, Message>) => {
      watch(call, 'sleep');
    },
    missing: (_call: grpc.ServerUnaryCall<Message, Message>, callback: grpc.sendUnaryData<Message>) => {
      callback({ code: grpc.status.NOT_FOUND, details: 'no such thing' });
    },
  });
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound)));
  });
  return { port, close: () => server.forceShutdown() };
}

/** The generic client of EchoService. */
export type EchoClient = grpc.Client & Record<keyof typeof EchoService, (...args: never[]) => unknown>;

/** A client dialling the edge's TLS port on loopback, with SNI and :authority the tunnel's hostname. */
export function echoClient(server: Pick<TestServer, 'httpsPort' | 'caPem'>, hostname: string): grpc.Client {
  const Client = grpc.makeGenericClientConstructor(EchoService, 'Echo');
  return new Client(`127.0.0.1:${server.httpsPort}`, grpc.credentials.createSsl(Buffer.from(server.caPem)), {
    'grpc.ssl_target_name_override': hostname,
    'grpc.default_authority': hostname,
  });
}

/** Calls a unary method; resolves with the answer and the trailing metadata, or rejects with the ServiceError. */
export function unaryCall(
  client: grpc.Client,
  name: string,
  request: Message,
  options: grpc.CallOptions = {},
): Promise<{ response: Message; trailers: grpc.Metadata }> {
  return new Promise((resolve, reject) => {
    let response: Message | undefined;
    const call = client.makeUnaryRequest(
      `/test.Echo/${name}`,
      json.requestSerialize,
      json.responseDeserialize,
      request,
      new grpc.Metadata(),
      options,
      (error, value) => {
        if (error) reject(error);
        else response = value;
      },
    );
    call.on('status', (status: grpc.StatusObject) => {
      if (status.code === grpc.status.OK) resolve({ response: response!, trailers: status.metadata });
    });
  });
}

export { grpc, json };
