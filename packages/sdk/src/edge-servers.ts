import { ErrorCode, SvcError } from '@svcrouter/protocol';
import type { AgentSession } from './agent-session.js';

/**
 * The edge URLs of SVC_SERVER (or `serverUrl`): one URL, or several separated by commas, each
 * `http://` or `https://`. Spaces around entries are ignored; an empty or other entry is refused
 * with EDGE_UNREACHABLE and a sentence naming it, before anything is dialled.
 */
export function parseServerUrls(value: string): string[] {
  const entries = value.split(',').map((entry) => entry.trim());
  const urls: string[] = [];
  for (const entry of entries) {
    let url: URL | undefined;
    try {
      url = new URL(entry);
    } catch {
      url = undefined;
    }
    if (entry === '' || !url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '') {
      const what = entry === '' ? 'an empty entry' : `"${withoutCredentials(entry)}"`;
      throw new SvcError(
        ErrorCode.EDGE_UNREACHABLE,
        `invalid SVC_SERVER "${withoutCredentials(value)}": ${what} is not an http:// or https:// URL (give one edge URL, or several separated by commas)`,
      );
    }
    // The agent signs in with its token alone; a password in the URL would only be echoed in
    // messages and logs that name the edge.
    if (url.username !== '' || url.password !== '') {
      throw new SvcError(
        ErrorCode.EDGE_UNREACHABLE,
        `invalid SVC_SERVER "${withoutCredentials(value)}": an edge URL carries no user name or password (the agent signs in with SVC_TOKEN alone)`,
      );
    }
    // The agent dials the session path at the edge's root; a path, query or fragment given here
    // would be dropped without a word, and a proxy that mounts the edge under one would not work.
    if (url.pathname !== '/' || url.search !== '' || url.hash !== '') {
      throw new SvcError(
        ErrorCode.EDGE_UNREACHABLE,
        `invalid SVC_SERVER "${withoutCredentials(value)}": an edge URL is a scheme, host and port only, with no path or query ("${url.pathname}${url.search}${url.hash}"); the edge serves agents at its root`,
      );
    }
    // The same node named twice would only be dialled twice.
    if (!urls.includes(entry)) urls.push(entry);
  }
  return urls;
}

/** `value` with the user name and password of each URL in it shown as `…`, never echoed. */
function withoutCredentials(value: string): string {
  return value.replace(/\/\/[^/?#,\s]*@/g, '//…@');
}

/**
 * The two sessions of an agent given several edge URLs: each dials a different URL, and one that
 * lost its node moves on to the next URL of the list that the other session is not using.
 */
export class EdgePair {
  constructor(private readonly urls: readonly string[]) {}

  /** The URLs the standby session starts from: the list after the primary's, round the end. */
  standbyStart(primaryUrl: string): string {
    return this.next(primaryUrl, primaryUrl);
  }

  /** Makes each session choose its next URL away from the other's. */
  link(primary: AgentSession, standby: AgentSession): void {
    primary.chooseServer = (current) => this.next(current, standby.serverUrl);
    standby.chooseServer = (current) => this.next(current, primary.serverUrl);
    primary.partner = standby;
    standby.partner = primary;
  }

  /** The URL after `current` in the list that is not `avoid`; `current` itself when there is none. */
  next(current: string, avoid: string): string {
    const start = this.urls.indexOf(current);
    for (let step = 1; step <= this.urls.length; step++) {
      const url = this.urls[(start + step) % this.urls.length]!;
      if (url !== avoid) return url;
    }
    return current;
  }
}
