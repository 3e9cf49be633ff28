/*
 * Just enough of a TLS ClientHello to read its server name (SNI, RFC 6066 §3): the edge routes a
 * TLS passthrough tunnel's connections by it without terminating TLS. Hostile input: every length
 * is checked against the bytes present and against its enclosing structure, nothing is copied
 * beyond the name, and a malformed message is 'invalid' rather than an exception.
 */

/** Longest ClientHello the edge waits for, records included: larger closes the connection. */
export const MAX_CLIENT_HELLO_BYTES = 16 * 1024;

const RECORD_HANDSHAKE = 0x16;
const HANDSHAKE_CLIENT_HELLO = 0x01;
const EXTENSION_SERVER_NAME = 0x0000;
const NAME_TYPE_HOST = 0x00;
const RECORD_HEADER = 5;
/** Largest TLSPlaintext fragment (RFC 8446 §5.1). */
const MAX_FRAGMENT = 16384;

/** What the first bytes of a connection say. */
export type ClientHelloResult =
  /** Too few bytes yet: read more (up to MAX_CLIENT_HELLO_BYTES). */
  | { kind: 'more' }
  /** Not a TLS ClientHello, or a malformed one. */
  | { kind: 'invalid'; reason: string }
  /** A complete ClientHello; `serverName` is its host_name lower-cased, undefined when it sends none. */
  | { kind: 'hello'; serverName: string | undefined };

/**
 * Reads the ClientHello at the start of `bytes` (possibly spread over several handshake records)
 * and returns its SNI. Bytes after the ClientHello are ignored.
 */
export function parseClientHello(bytes: Buffer): ClientHelloResult {
  const handshake = handshakeBytes(bytes);
  if (handshake.kind !== 'bytes') return handshake;
  const body = handshake.bytes;
  if (body.length < 4) return { kind: 'more' };
  if (body[0] !== HANDSHAKE_CLIENT_HELLO) return { kind: 'invalid', reason: 'first handshake message is not a ClientHello' };
  const length = (body[1]! << 16) | (body[2]! << 8) | body[3]!;
  if (length > MAX_CLIENT_HELLO_BYTES) return { kind: 'invalid', reason: 'ClientHello too large' };
  if (body.length < 4 + length) return handshake.complete ? { kind: 'invalid', reason: 'ClientHello cut short' } : { kind: 'more' };
  return readHello(body.subarray(4, 4 + length));
}

/** The handshake layer's bytes: the fragments of the leading handshake records, joined. */
function handshakeBytes(
  bytes: Buffer,
): { kind: 'bytes'; bytes: Buffer; complete: boolean } | { kind: 'more' } | { kind: 'invalid'; reason: string } {
  const fragments: Buffer[] = [];
  let offset = 0;
  let total = 0;
  let needed = Infinity;
  while (offset + RECORD_HEADER <= bytes.length) {
    if (bytes[offset] !== RECORD_HANDSHAKE) {
      return offset === 0
        ? { kind: 'invalid', reason: 'not a TLS handshake record' }
        : { kind: 'invalid', reason: 'ClientHello interrupted' };
    }
    if (bytes[offset + 1] !== 3) return { kind: 'invalid', reason: 'not a TLS record version' };
    const fragment = bytes.readUInt16BE(offset + 3);
    if (fragment === 0 || fragment > MAX_FRAGMENT) return { kind: 'invalid', reason: 'bad record length' };
    const end = offset + RECORD_HEADER + fragment;
    if (end > bytes.length) {
      fragments.push(bytes.subarray(offset + RECORD_HEADER));
      return { kind: 'bytes', bytes: Buffer.concat(fragments), complete: false };
    }
    fragments.push(bytes.subarray(offset + RECORD_HEADER, end));
    total += fragment;
    offset = end;
    if (needed === Infinity && total >= 4) {
      const first = fragments.length === 1 ? fragments[0]! : Buffer.concat(fragments);
      needed = 4 + ((first[1]! << 16) | (first[2]! << 8) | first[3]!);
    }
    // The whole ClientHello has arrived: later records are not ours to read.
    if (total >= needed) return { kind: 'bytes', bytes: Buffer.concat(fragments), complete: true };
  }
  if (offset === 0 && bytes.length > 0 && bytes[0] !== RECORD_HANDSHAKE) return { kind: 'invalid', reason: 'not a TLS handshake record' };
  if (fragments.length === 0) return { kind: 'more' };
  return { kind: 'bytes', bytes: Buffer.concat(fragments), complete: false };
}

/** The ClientHello body (after its 4-byte handshake header): skips to the extensions and finds server_name. */
function readHello(hello: Buffer): ClientHelloResult {
  const reader = new Reader(hello);
  // legacy_version (2), random (32)
  if (!reader.skip(34)) return cut();
  // legacy_session_id <0..32>
  const session = reader.u8();
  if (session === undefined || session > 32 || !reader.skip(session)) return cut();
  // cipher_suites <2..2^16-2>
  const suites = reader.u16();
  if (suites === undefined || suites < 2 || suites % 2 !== 0 || !reader.skip(suites)) return cut();
  // legacy_compression_methods <1..2^8-1>
  const compression = reader.u8();
  if (compression === undefined || compression < 1 || !reader.skip(compression)) return cut();
  // No extensions at all (an old client): no SNI.
  if (reader.remaining === 0) return { kind: 'hello', serverName: undefined };
  const extensionsLength = reader.u16();
  if (extensionsLength === undefined || extensionsLength !== reader.remaining) return cut();
  let serverName: string | undefined;
  let seen = false;
  while (reader.remaining > 0) {
    const type = reader.u16();
    const length = reader.u16();
    if (type === undefined || length === undefined) return cut();
    const data = reader.take(length);
    if (data === undefined) return cut();
    if (type !== EXTENSION_SERVER_NAME) continue;
    if (seen) return { kind: 'invalid', reason: 'two server_name extensions' };
    seen = true;
    const name = readServerName(data);
    if (typeof name === 'object') return name;
    serverName = name;
  }
  return { kind: 'hello', serverName };
}

/** The host_name of a server_name extension's data; an object when it is malformed. */
function readServerName(data: Buffer): string | undefined | { kind: 'invalid'; reason: string } {
  const reader = new Reader(data);
  const listLength = reader.u16();
  if (listLength === undefined || listLength !== reader.remaining) return { kind: 'invalid', reason: 'server_name list length' };
  let host: string | undefined;
  while (reader.remaining > 0) {
    const type = reader.u8();
    const length = reader.u16();
    if (type === undefined || length === undefined) return { kind: 'invalid', reason: 'server_name entry' };
    const name = reader.take(length);
    if (name === undefined) return { kind: 'invalid', reason: 'server_name entry length' };
    if (type !== NAME_TYPE_HOST || host !== undefined) continue;
    if (length === 0 || length > 255) return { kind: 'invalid', reason: 'host_name length' };
    // A DNS name is printable ASCII; anything else would not route anyway.
    for (const byte of name) if (byte <= 0x20 || byte >= 0x7f) return { kind: 'invalid', reason: 'host_name is not a DNS name' };
    host = name.toString('latin1').toLowerCase();
  }
  return host;
}

function cut(): ClientHelloResult {
  return { kind: 'invalid', reason: 'ClientHello fields overrun it' };
}

/** Bounds-checked reads over a buffer; each returns undefined past its end. */
class Reader {
  private offset = 0;

  constructor(private readonly bytes: Buffer) {}

  get remaining(): number {
    return this.bytes.length - this.offset;
  }

  u8(): number | undefined {
    if (this.remaining < 1) return undefined;
    return this.bytes[this.offset++]!;
  }

  u16(): number | undefined {
    if (this.remaining < 2) return undefined;
    const value = this.bytes.readUInt16BE(this.offset);
    this.offset += 2;
    return value;
  }

  skip(count: number): boolean {
    if (this.remaining < count) return false;
    this.offset += count;
    return true;
  }

  take(count: number): Buffer | undefined {
    if (this.remaining < count) return undefined;
    const slice = this.bytes.subarray(this.offset, this.offset + count);
    this.offset += count;
    return slice;
  }
}
