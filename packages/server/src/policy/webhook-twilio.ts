import { createHash } from 'node:crypto';
import { sameText } from '@svcrouter/protocol';
import { MAX_SIGNATURE_HEADER_LENGTH, headerValue, hmac, type SignedRequest, type WebhookFailure } from './webhook-signature-parts.js';

// Twilio signs the URL it requested, not the body: `X-Twilio-Signature` is the base64
// HMAC-SHA1 (HMAC-SHA256 for SharedKey webhooks that say so in
// `X-Twilio-Webhooks-Signature-Settings`), keyed by the auth token, of the full URL followed by
// each form parameter's name and value, sorted by name, for an application/x-www-form-urlencoded
// POST. A JSON body is covered instead by the `bodySHA256` query parameter (hex SHA-256 of the
// body), and the URL alone is signed. Like Twilio's own library, the URL is tried with and without
// its default port, because a proxy in between may add or drop it. Twilio sends no timestamp.

/** The scheme, authority and rest of a URL, split without normalising (Twilio signed its exact characters). */
function splitUrl(url: string): { scheme: string; userInfo: string; host: string; port: string; rest: string } | undefined {
  const match = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#]*)/i.exec(url);
  if (!match) return undefined;
  const [prefix, scheme = '', authority = ''] = match;
  const userInfoEnd = authority.lastIndexOf('@');
  const hostAndPort = authority.slice(userInfoEnd + 1);
  // In an IPv6 literal the port's colon comes after the closing bracket.
  const portStart = hostAndPort.indexOf(':', hostAndPort.lastIndexOf(']') + 1);
  return {
    scheme,
    userInfo: authority.slice(0, userInfoEnd + 1),
    host: portStart === -1 ? hostAndPort : hostAndPort.slice(0, portStart),
    port: portStart === -1 ? '' : hostAndPort.slice(portStart),
    rest: url.slice(prefix.length),
  };
}

/** The URL without a port and with the scheme's default one: the two forms Twilio may have signed. */
function urlCandidates(url: string): string[] {
  const parts = splitUrl(url);
  if (!parts) return [url];
  const withoutPort = parts.scheme + parts.userInfo + parts.host + parts.rest;
  if (parts.port) return withoutPort === url ? [url] : [url, withoutPort];
  const defaultPort = parts.scheme.toLowerCase() === 'https://' ? ':443' : ':80';
  return [url, parts.scheme + parts.userInfo + parts.host + defaultPort + parts.rest];
}

/** The signed text after the URL: each name followed by its value, names sorted; a repeated name's distinct values sorted. */
function formParameterText(body: Buffer): string {
  const values = new Map<string, Set<string>>();
  for (const [name, value] of new URLSearchParams(body.toString('utf8'))) {
    const seen = values.get(name);
    if (seen) seen.add(value);
    else values.set(name, new Set([value]));
  }
  let text = '';
  for (const name of [...values.keys()].sort()) {
    for (const value of [...values.get(name)!].sort()) text += name + value;
  }
  return text;
}

/** Whether the request carries its parameters in a form body, which Twilio then signs. */
function isFormPost(request: SignedRequest): boolean {
  const type = headerValue(request, 'content-type');
  return request.method.toUpperCase() === 'POST' && type !== undefined && /^application\/x-www-form-urlencoded\s*(;|$)/i.test(type);
}

/** The hash named by a SharedKey webhook's settings header; SHA-1 (the auth token's) when absent. */
function signatureHash(request: SignedRequest): 'sha1' | 'sha256' | undefined {
  const settings = headerValue(request, 'x-twilio-webhooks-signature-settings');
  const algorithm = settings
    ?.split(',')
    .map((part) => part.split('='))
    .find(([key]) => key?.trim() === 'algorithm')?.[1]
    ?.trim();
  if (!algorithm || algorithm.toUpperCase() === 'HMAC_SHA1') return 'sha1';
  return algorithm.toUpperCase() === 'HMAC_SHA256' ? 'sha256' : undefined;
}

/** Twilio: `X-Twilio-Signature` over the URL and the sorted form parameters, or over the URL with `bodySHA256` for a JSON body. */
export function verifyTwilio(secret: string, request: SignedRequest): WebhookFailure | undefined {
  const signature = headerValue(request, 'x-twilio-signature');
  if (signature === undefined) return 'missing signature';
  const hash = signatureHash(request);
  if (signature.length > MAX_SIGNATURE_HEADER_LENGTH || hash === undefined) return 'signature mismatch';
  let bodyHash: string | null = null;
  try {
    bodyHash = new URL(request.url).searchParams.get('bodySHA256');
  } catch {
    return 'signature mismatch';
  }
  let parameters = '';
  if (bodyHash !== null) {
    if (!sameText(bodyHash, createHash('sha256').update(request.body).digest('hex'))) return 'signature mismatch';
  } else if (isFormPost(request)) {
    parameters = formParameterText(request.body);
  } else if (request.body.length > 0) {
    // Neither form parameters nor bodySHA256: nothing signed covers this body, so any body would pass.
    return 'signature mismatch';
  }
  let matched = false;
  for (const url of urlCandidates(request.url)) matched = sameText(signature, hmac(hash, secret, [url, parameters], 'base64')) || matched;
  return matched ? undefined : 'signature mismatch';
}
