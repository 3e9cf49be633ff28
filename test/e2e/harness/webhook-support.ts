// A real webhook receiver on loopback for the webhook e2e tests: it verifies every delivery's
// Standard Webhooks signature with the `standardwebhooks` package and answers what the test says.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { api, type TestServer } from './index.js';

/** One request the receiver got. */
export interface Received {
  id: string;
  type: string;
  envelope: { id: string; type: string; createdAt: string; data: Record<string, unknown> };
  /** Whether the signature verified against the webhook's secret. */
  verified: boolean;
  /** The status the receiver answered. */
  answered: number;
  /** The raw body and headers, for other verifiers. */
  raw: { body: string; headers: http.IncomingHttpHeaders };
}

export interface Receiver {
  url: string;
  received: Received[];
  /** Set once the webhook is created (the secret is shown then). */
  secret: string | undefined;
  /** Decides the answer per request; default 200. */
  answer: (envelope: Received['envelope'], seen: number) => number;
  /** Resolves with the first request (past or future) matching `match`. */
  next(match: (r: Received) => boolean): Promise<Received>;
  /** Requests answered 2xx for each event id. */
  deliveredCounts(): Map<string, number>;
  close(): Promise<void>;
}

/** Starts a receiver on 127.0.0.1:0. */
export async function startReceiver(): Promise<Receiver> {
  const waiters: { match: (r: Received) => boolean; resolve: (r: Received) => void }[] = [];
  const receiver: Receiver = {
    url: '',
    received: [],
    secret: undefined,
    answer: () => 200,
    next(match) {
      const seen = receiver.received.find(match);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve) => waiters.push({ match, resolve }));
    },
    deliveredCounts() {
      const counts = new Map<string, number>();
      for (const r of receiver.received) if (r.answered >= 200 && r.answered < 300) counts.set(r.id, (counts.get(r.id) ?? 0) + 1);
      return counts;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let verified = false;
      try {
        if (receiver.secret) {
          new Webhook(receiver.secret).verify(body, req.headers as Record<string, string>);
          verified = true;
        }
      } catch {
        verified = false;
      }
      const envelope = JSON.parse(body) as Received['envelope'];
      const seen = receiver.received.filter((r) => r.id === envelope.id).length;
      const answered = receiver.answer(envelope, seen);
      const record: Received = {
        id: String(req.headers['webhook-id']),
        type: envelope.type,
        envelope,
        verified,
        answered,
        raw: { body, headers: req.headers },
      };
      receiver.received.push(record);
      res.writeHead(answered).end();
      for (const waiter of [...waiters]) {
        if (waiter.match(record)) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve(record);
        }
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  return receiver;
}

/** A webhook as POST /v1/webhooks answers. */
export interface CreatedWebhook {
  id: string;
  url: string;
  events: string[];
  createdAt: string;
  secret: string;
}

/** POST /v1/webhooks for the receiver; asserts 201 and hands the secret to the receiver. */
export async function addWebhook(
  server: Pick<TestServer, 'url'>,
  token: string,
  receiver: Receiver,
  events?: string[],
): Promise<CreatedWebhook> {
  const answer = await api(server, 'POST', '/v1/webhooks', { token }, { url: receiver.url, ...(events ? { events } : {}) });
  assert.equal(answer.status, 201, answer.text);
  const hook = answer.body as CreatedWebhook;
  receiver.secret = hook.secret;
  return hook;
}

/** One delivery as GET /v1/webhooks/:id/deliveries lists it. */
export interface DeliveryView {
  id: string;
  eventId: string;
  eventType: string;
  state: 'pending' | 'delivered' | 'failed';
  attempts: { at: string; statusCode: number | null; error: string | null; durationMs: number }[];
}

/** GET /v1/webhooks/:id/deliveries. */
export async function deliveries(server: Pick<TestServer, 'url'>, token: string, webhookId: string): Promise<DeliveryView[]> {
  const answer = await api(server, 'GET', `/v1/webhooks/${webhookId}/deliveries`, { token });
  assert.equal(answer.status, 200, answer.text);
  return (answer.body as { deliveries: DeliveryView[] }).deliveries;
}
