import { acmeChallengeToken } from '../certs/index.js';
import type { EdgeDeps, VisitorRequest, VisitorResponse } from './edge-deps.js';

/**
 * ACME HTTP-01 on the plain-HTTP port, for any host, before routing: the CA fetches
 * `/.well-known/acme-challenge/<token>` from the host being certified, which may have no
 * tunnel yet. A token no node of this service issued falls through to normal routing, so an
 * origin answering its own challenges still can. True when this took the request: answered
 * now, or asked the shared store, after which it answers or calls `otherwise`.
 */
export function answerAcmeChallenge(
  acmeChallenge: EdgeDeps['acmeChallenge'],
  req: VisitorRequest,
  res: VisitorResponse,
  otherwise: () => void,
): boolean {
  if (!acmeChallenge || (req.method !== 'GET' && req.method !== 'HEAD')) return false;
  const token = acmeChallengeToken(req.url ?? '');
  const answer = token === undefined ? undefined : acmeChallenge(token);
  if (answer === undefined) return false;
  if (typeof answer === 'string') {
    sendAcmeAnswer(res, answer);
    return true;
  }
  void answer.then((found) => {
    if (res.destroyed) return;
    if (found === undefined) otherwise();
    else sendAcmeAnswer(res, found);
  });
  return true;
}

function sendAcmeAnswer(res: VisitorResponse, answer: string): void {
  res.writeHead(200, { 'content-type': 'text/plain', 'content-length': Buffer.byteLength(answer), 'cache-control': 'no-store' });
  res.end(answer);
}
