import {
  isTcpHead,
  ResetCode,
  StreamResetError,
  streamDuplex,
  trailerFields,
  type CallbackStream,
  type RequestHead,
  type StreamDuplex,
} from '@svcrouter/protocol';
import { actOn, isPending, normalizeHost, withIdentity } from '../edge/index.js';
import type { Binding } from '../edge/index.js';
import { offlinePage, type EdgePage } from '../edge/pages.js';
import type { AccessCheck, HeaderRules, Identity } from '../policy/index.js';
import type { WebhookVerifier } from '../edge/index.js';
import { carriesRawBytes, relayTcpToAgent } from './relay-tcp.js';
import { relayTraffic } from './relay-traffic.js';

/**
 * On the node holding a tunnel's agent: carries one stream a peer node opened (a visitor's
 * request that reached the peer) into the agent's session. The head goes on unchanged (the peer
 * built it as for an agent: X-Forwarded-For with the visitor's address, Host, the tunnel id),
 * then bytes both ways through pipes between the two streams as Duplexes, so flow control is end to end: a slow agent stops the
 * peer's stream, which stops the visitor. Resets cross in both directions with their codes, so
 * the peer shows the visitor the page this node would have shown. The peer records the exchange
 * (inspector, metering); this node does not, so each request is counted once.
 */
export function relayToAgent(stream: CallbackStream, bindingOf: (tunnelId: string) => Binding | undefined, verify?: WebhookVerifier): void {
  const peer = streamDuplex(stream);
  const head = peer.meta;
  if (!isRequestHead(head)) {
    peer.reset(ResetCode.CANCEL);
    return;
  }
  const binding = bindingOf(head.t);
  // A TCP or TLS passthrough connection: raw bytes, no HTTP page or rule.
  if (isTcpHead(head) && (binding === undefined || carriesRawBytes(binding))) return relayTcpToAgent(peer, head, binding);
  if (!binding || binding.session.isClosed) return answerOffline(peer, head);
  return relayTo(peer, binding.tunnelId === head.t ? head : { ...head, t: binding.tunnelId }, binding, verify);
}

/** Relays the peer's request to `binding` (a pool's member other than the route's gets the head with its own tunnel id). */
function relayTo(peer: StreamDuplex, head: RequestHead, binding: Binding, verify: WebhookVerifier | undefined): void {
  // The tunnel's access and traffic rules are applied here, on the node holding its agent, for
  // requests that entered anywhere: the peer appended the visitor's own address to X-Forwarded-For.
  const access = binding.access;
  const visitor = { ip: visitorOf(head.h), proto: forwardedProtoOf(head.h) || 'http', authority: forwardedHostOf(head.h) };
  const onward = (identity: Identity | undefined): void =>
    relayTraffic(
      peer,
      head,
      binding,
      visitor,
      verify,
      (page) => answerPage(peer, page),
      (shaped, body) => {
        if (binding.session.isClosed) answerOffline(peer, shaped);
        else openToAgent(peer, shaped, binding, access, identity, body);
      },
    );
  if (access === undefined) return onward(undefined);
  const verdict = access.admit({
    ip: visitor.ip,
    headers: head.h,
    method: head.m,
    path: head.p,
    host: hostOf(head.h),
    secure: forwardedProtoOf(head.h) === 'https',
  });
  const actions = {
    pass: onward,
    refuse: (page: EdgePage) => answerPage(peer, page),
  };
  if (!isPending(verdict)) return actOn(verdict, actions);
  void verdict.then((settled) => {
    if (!peer.destroyed) actOn(settled, actions);
  });
}

/** Opens the agent's stream for a peer's request and pipes the two together. */
function openToAgent(
  peer: StreamDuplex,
  head: RequestHead,
  binding: Binding,
  access: AccessCheck | undefined,
  identity: Identity | undefined,
  body: Buffer | undefined,
): void {
  if (access?.consumesAuthorization) head = { ...head, h: withoutAuthorization(head.h) };
  if (identity !== undefined) head = { ...head, h: withIdentity(head.h, identity) };
  const requestHeaders = binding.traffic?.requestHeaders;
  if (requestHeaders !== undefined) head = { ...head, h: requestHeaders.apply(head.h) };
  const responseHeaders = binding.traffic?.responseHeaders;
  // OPEN carries END exactly when the peer has no body to send: no body flag, no upgrade.
  const end = head.b !== 1 && head.u !== 1;
  let agent: StreamDuplex;
  try {
    agent = streamDuplex(binding.session.mux.open(head, undefined, end));
  } catch {
    return answerOffline(peer, head);
  }
  peer.on('error', (error: Error) => agent.reset(error instanceof StreamResetError ? error.code : ResetCode.CANCEL));
  peer.on('close', () => {
    // The peer's side went away before the agent's answer completed (a local reset on close).
    if (!agent.destroyed && peer.resetCode !== undefined) agent.reset(peer.resetCode);
  });
  agent.on('error', (error: Error) => peer.reset(error instanceof StreamResetError ? error.code : ResetCode.CANCEL));
  agent.on('info', (meta: unknown) => peer.sendInfo(meta));
  agent.on('headers', (meta: unknown) => peer.sendHeaders(responseHeaders === undefined ? meta : shapedResponse(meta, responseHeaders)));
  pipeWithTrailers(agent, peer);
  if (end) return;
  if (body === undefined) return pipeWithTrailers(peer, agent);
  // Read whole for a webhook check: sent from memory, with the trailers that ended it.
  if (body.length > 0) agent.write(body);
  agent.endWithTrailers(peer.trailers === undefined ? [] : trailerFields(peer.trailers));
}

/** A response head with the tunnel's response header rules applied (a malformed head is left for the peer to refuse). */
function shapedResponse(meta: unknown, rules: HeaderRules): unknown {
  const head = meta as { s?: unknown; h?: unknown } | null;
  if (head === null || typeof head !== 'object' || !Array.isArray(head.h) || head.s === 101) return meta;
  if (!head.h.every((value) => typeof value === 'string')) return meta;
  return { ...head, h: rules.apply(head.h as string[]) };
}

/** The authority the visitor asked for, as the peer recorded it (its X-Forwarded-Host, the last one). */
function forwardedHostOf(headers: readonly string[]): string {
  let host = '';
  for (let i = 0; i < headers.length; i += 2) {
    if (headers[i]!.toLowerCase() === 'x-forwarded-host') host = headers[i + 1]!;
  }
  return host;
}

/** Pipes `from` into `to`, and ends `to` with the trailers that ended `from`. */
function pipeWithTrailers(from: StreamDuplex, to: StreamDuplex): void {
  from.pipe(to, { end: false });
  from.on('end', () => {
    if (!to.destroyed) to.endWithTrailers(from.trailers === undefined ? [] : trailerFields(from.trailers));
  });
}

/** The page the holder shows when the tunnel left it between the peer's lookup and the stream. */
function answerOffline(peer: StreamDuplex, head: RequestHead): void {
  answerPage(peer, offlinePage(hostOf(head.h)));
}

/** Answers the peer's request with one of the edge's pages. */
function answerPage(peer: StreamDuplex, page: EdgePage): void {
  const headers = Object.entries(page.headers).flat();
  peer.sendHeaders({ s: page.status, h: headers });
  peer.end(page.body);
  // Whatever the peer still sends (a body) is read and dropped.
  peer.resume();
}

/** The visitor's address: the last X-Forwarded-For entry, the one the peer appended. */
function visitorOf(headers: readonly string[]): string {
  let forwardedFor = '';
  for (let i = 0; i < headers.length; i += 2) {
    if (headers[i]!.toLowerCase() === 'x-forwarded-for') forwardedFor = headers[i + 1]!;
  }
  const comma = forwardedFor.lastIndexOf(',');
  return (comma < 0 ? forwardedFor : forwardedFor.slice(comma + 1)).trim();
}

/** Header pairs without Authorization (the edge consumed it). */
function withoutAuthorization(headers: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < headers.length; i += 2) if (headers[i]!.toLowerCase() !== 'authorization') out.push(headers[i]!, headers[i + 1]!);
  return out;
}

/** The scheme the entry node saw the visitor use (its X-Forwarded-Proto, the last one it set). */
function forwardedProtoOf(headers: readonly string[]): string {
  let proto = '';
  for (let i = 0; i < headers.length; i += 2) {
    if (headers[i]!.toLowerCase() === 'x-forwarded-proto') proto = headers[i + 1]!;
  }
  return proto;
}

function hostOf(headers: readonly string[]): string {
  for (let i = 0; i < headers.length; i += 2) {
    if (headers[i]!.toLowerCase() === 'host') return normalizeHost(headers[i + 1]!) ?? '';
  }
  return '';
}

function isRequestHead(meta: unknown): meta is RequestHead {
  const head = meta as Partial<RequestHead> | null;
  return (
    typeof head === 'object' &&
    head !== null &&
    typeof head.t === 'string' &&
    typeof head.m === 'string' &&
    typeof head.p === 'string' &&
    Array.isArray(head.h) &&
    head.h.length % 2 === 0 &&
    head.h.every((v) => typeof v === 'string')
  );
}
