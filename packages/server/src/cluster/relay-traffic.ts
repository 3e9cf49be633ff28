import type { RequestHead, StreamDuplex } from '@svcrouter/protocol';
import {
  bodyTooLargePage,
  headerRecord,
  rateLimitedPage,
  rateLimitUnavailablePage,
  webhookRefusedPage,
  type Binding,
  type EdgePage,
  type WebhookVerifier,
} from '../edge/index.js';

/** Where a request goes once the traffic rules let it: its head (a rewritten target) and the body read for a webhook check, if any. */
export type RelayOnward = (head: RequestHead, body: Buffer | undefined) => void;

/**
 * The tunnel's traffic rules for a request a peer node carried here, in the edge's order (rate
 * limit, edge rules, webhook check); the header rules are applied as the head goes to the agent
 * (relay.ts). The visitor's address is the last X-Forwarded-For entry, the one the peer appended;
 * the URL a webhook sender signed is rebuilt from the peer's X-Forwarded-Proto and -Host. An answer
 * goes back to the peer, which records it with its status.
 */
export function relayTraffic(
  peer: StreamDuplex,
  head: RequestHead,
  binding: Binding,
  visitor: { ip: string; proto: string; authority: string },
  verify: WebhookVerifier | undefined,
  answer: (page: EdgePage) => void,
  onward: RelayOnward,
): void {
  const traffic = binding.traffic;
  if (traffic === undefined) return onward(head, undefined);
  const afterRate = (): void => {
    const outcome = traffic.applyRules({ method: head.m, target: head.p, headers: head.h });
    if (outcome !== undefined && 'reply' in outcome) return answer(outcome.reply);
    const shaped = outcome === undefined ? head : { ...head, p: outcome.target };
    const webhook = traffic.verifyWebhook;
    if (webhook === undefined) return onward(shaped, undefined);
    void readPeerBody(peer, head.b === 1, webhook.maxBody).then((body) => {
      if (body === undefined) return;
      if (body === 'too large') return answer(bodyTooLargePage(webhook.maxBody));
      const request = { url: `${visitor.proto}://${visitor.authority}${head.p}`, method: head.m, headers: headerRecord(head.h), body };
      const failure = verify === undefined ? 'signature mismatch' : verify(webhook.provider, webhook.secret, request, Date.now());
      if (failure !== undefined) return answer(webhookRefusedPage(failure));
      onward(shaped, body);
    });
  };
  const rate = traffic.admitRate(binding.hostname, visitor.ip, Date.now());
  if (rate === true) return afterRate();
  if (typeof rate === 'number') return answer(rateLimitedPage(rate));
  void rate.then(
    (settled) => {
      if (peer.destroyed) return;
      if (settled === true) afterRate();
      else answer(rateLimitedPage(settled));
    },
    () => peer.destroyed || answer(rateLimitUnavailablePage()),
  );
}

/** The peer's whole body, at most `max` bytes; undefined when the peer's stream failed first. */
function readPeerBody(peer: StreamDuplex, hasBody: boolean, max: number): Promise<Buffer | 'too large' | undefined> {
  if (!hasBody) return Promise.resolve(Buffer.alloc(0));
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (result: Buffer | 'too large' | undefined): void => {
      peer.off('data', onData);
      peer.off('end', onEnd);
      peer.off('close', onClose);
      resolve(result);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > max) done('too large');
      else chunks.push(chunk);
    };
    const onEnd = (): void => done(Buffer.concat(chunks, size));
    const onClose = (): void => done(undefined);
    peer.on('data', onData);
    peer.once('end', onEnd);
    peer.once('close', onClose);
  });
}
