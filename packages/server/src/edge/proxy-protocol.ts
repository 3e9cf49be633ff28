import { isIP, type Socket } from 'node:net';

/*
 * PROXY protocol v1 (text) and v2 (binary), as HAProxy (`send-proxy`, `send-proxy-v2`) and AWS
 * NLB send it: a load balancer's first bytes on a connection name the visitor it carries. Read
 * only on connections from SVC_TRUSTED_PROXIES; a malformed header closes the connection.
 */

/** How long a trusted proxy has to send its header (or its first bytes) before the connection is closed. */
export const PROXY_HEADER_TIMEOUT_MS = 5_000;
/** Longest v1 line, CRLF included (the protocol's own bound). */
const V1_MAX_BYTES = 107;
/** Longest v2 address block accepted (addresses plus TLVs such as HAProxy's unique id). */
const V2_MAX_BLOCK = 4_096;
const V1_PREFIX = Buffer.from('PROXY ', 'latin1');
const V2_SIGNATURE = Buffer.from([0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a]);

/** What the first bytes of a connection are. */
export type ProxyHeader =
  /** Too few bytes to tell. */
  | { kind: 'more' }
  /** No PROXY header: the bytes are the connection's own (a direct client, a health check). */
  | { kind: 'none' }
  /** A header that is not valid: the connection must close. */
  | { kind: 'invalid'; reason: string }
  /** A header of `length` bytes; `address` is the visitor's, undefined for LOCAL or UNKNOWN (keep the socket's). */
  | { kind: 'header'; length: number; address: string | undefined };

/** Reads a PROXY header (v1 or v2) off the start of `bytes`. */
export function parseProxyHeader(bytes: Buffer): ProxyHeader {
  if (startsLike(bytes, V2_SIGNATURE)) return bytes.length < V2_SIGNATURE.length ? { kind: 'more' } : parseV2(bytes);
  if (startsLike(bytes, V1_PREFIX)) return bytes.length < V1_PREFIX.length ? { kind: 'more' } : parseV1(bytes);
  return { kind: 'none' };
}

/** Whether `bytes` and `prefix` agree on their common length. */
function startsLike(bytes: Buffer, prefix: Buffer): boolean {
  const n = Math.min(bytes.length, prefix.length);
  return n > 0 && bytes.subarray(0, n).equals(prefix.subarray(0, n));
}

function parseV1(bytes: Buffer): ProxyHeader {
  const end = bytes.subarray(0, V1_MAX_BYTES).indexOf('\r\n');
  if (end < 0) return bytes.length >= V1_MAX_BYTES ? { kind: 'invalid', reason: 'v1 line too long' } : { kind: 'more' };
  const parts = bytes.subarray(0, end).toString('latin1').split(' ');
  const length = end + 2;
  if (parts[1] === 'UNKNOWN') return { kind: 'header', length, address: undefined };
  if (parts.length !== 6) return { kind: 'invalid', reason: 'v1 needs 6 fields' };
  const [, family, source, destination, sourcePort, destinationPort] = parts as [string, string, string, string, string, string];
  const version = family === 'TCP4' ? 4 : family === 'TCP6' ? 6 : 0;
  if (version === 0) return { kind: 'invalid', reason: 'v1 family is not TCP4, TCP6 or UNKNOWN' };
  if (isIP(source) !== version || isIP(destination) !== version) return { kind: 'invalid', reason: 'v1 address' };
  if (!isPort(sourcePort) || !isPort(destinationPort)) return { kind: 'invalid', reason: 'v1 port' };
  return { kind: 'header', length, address: source };
}

function isPort(text: string): boolean {
  return /^(0|[1-9]\d{0,4})$/.test(text) && Number(text) <= 65535;
}

function parseV2(bytes: Buffer): ProxyHeader {
  if (bytes.length < 16) return { kind: 'more' };
  const versionCommand = bytes[12]!;
  if (versionCommand >> 4 !== 2) return { kind: 'invalid', reason: 'v2 version' };
  const command = versionCommand & 0x0f;
  if (command > 1) return { kind: 'invalid', reason: 'v2 command' };
  const block = bytes.readUInt16BE(14);
  if (block > V2_MAX_BLOCK) return { kind: 'invalid', reason: 'v2 block too long' };
  const length = 16 + block;
  if (bytes.length < length) return { kind: 'more' };
  // LOCAL: the balancer's own connection (a health check); the socket's address stands.
  if (command === 0) return { kind: 'header', length, address: undefined };
  const family = bytes[13]! >> 4;
  if (family === 1) {
    if (block < 12) return { kind: 'invalid', reason: 'v2 IPv4 block' };
    return { kind: 'header', length, address: `${bytes[16]}.${bytes[17]}.${bytes[18]}.${bytes[19]}` };
  }
  if (family === 2) {
    if (block < 36) return { kind: 'invalid', reason: 'v2 IPv6 block' };
    return { kind: 'header', length, address: formatIpv6(bytes.subarray(16, 32)) };
  }
  // UNSPEC or a Unix socket: no visitor address to take.
  return { kind: 'header', length, address: undefined };
}

/** An IPv6 address in its short form (RFC 5952); an IPv4-mapped one as dotted IPv4, as Node shows sockets. */
export function formatIpv6(bytes: Buffer): string {
  if (bytes.subarray(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff) {
    return `${bytes[12]}.${bytes[13]}.${bytes[14]}.${bytes[15]}`;
  }
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(bytes.readUInt16BE(i));
  let bestStart = -1;
  let bestLength = 1;
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLength) [bestStart, bestLength] = [i, j - i];
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestStart < 0) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLength).join(':')}`;
}

/**
 * Reads the PROXY header a trusted balancer may start `socket` with, then hands the socket on
 * with the header's bytes consumed and, when it named a visitor, `remoteAddress` set to that
 * visitor (every reader of the address, the request path and the API alike, then sees it). A
 * connection without a header is handed on as it came; a malformed or late header closes it.
 * The socket is handed on paused, with what followed the header unshifted onto it.
 */
export function readProxyHeader(socket: Socket, proceed: (socket: Socket) => void): void {
  let buffered: Buffer | undefined;
  const timer = setTimeout(() => socket.destroy(), PROXY_HEADER_TIMEOUT_MS);
  timer.unref();
  const onData = (chunk: Buffer): void => {
    buffered = buffered === undefined ? chunk : Buffer.concat([buffered, chunk]);
    const header = parseProxyHeader(buffered);
    if (header.kind === 'more') return;
    socket.off('data', onData);
    socket.off('close', onClose);
    socket.pause();
    clearTimeout(timer);
    if (header.kind === 'invalid') {
      socket.destroy();
      return;
    }
    let rest = buffered;
    if (header.kind === 'header') {
      rest = buffered.subarray(header.length);
      if (header.address !== undefined) setRemoteAddress(socket, header.address);
    }
    if (rest.length > 0) socket.unshift(rest);
    proceed(socket);
  };
  const onClose = (): void => clearTimeout(timer);
  socket.on('data', onData);
  socket.once('close', onClose);
  socket.on('error', () => socket.destroy());
}

/** Makes `socket.remoteAddress` answer the visitor's address from a PROXY header. */
export function setRemoteAddress(socket: object, address: string): void {
  Object.defineProperty(socket, 'remoteAddress', { value: address, configurable: true });
}

/** The visitor address a PROXY header gave the TCP socket under a TLS socket, carried up to the TLS socket. */
export function inheritRemoteAddress(tlsSocket: object): void {
  // Node keeps the TCP socket a TLS server wrapped as `_parent`; its own property is ours.
  const parent = (tlsSocket as { _parent?: object })._parent;
  const descriptor = parent === undefined ? undefined : Object.getOwnPropertyDescriptor(parent, 'remoteAddress');
  if (descriptor !== undefined) Object.defineProperty(tlsSocket, 'remoteAddress', descriptor);
}
