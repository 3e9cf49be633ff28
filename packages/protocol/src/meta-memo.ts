import { decodeJson } from './frame.js';

/** Longest payload kept for comparison; longer ones are decoded every time. */
const MAX_MEMO_BYTES = 2048;
/** Smallest comparison buffer, so payloads that grow by a few bytes do not each allocate one. */
const MIN_MEMO_BUFFER_BYTES = 256;

/**
 * Decodes one kind of JSON frame payload (a session's request heads, or its response heads),
 * remembering the last one. Consecutive heads on a session are often the same bytes (the same
 * client asking for the same path; an origin answering with the same head), and decoding
 * (a UTF-8 string, then JSON.parse building an object, an array and a string per header) costs
 * several times what comparing the bytes and copying the last result does. Every caller gets
 * its own copy, down to the arrays, so what one stream's owner does to its head (the host
 * rewrite, header rules) never reaches the next one's.
 */
export class MetaMemo {
  private bytes: Buffer | undefined;
  private length = -1;
  private value: unknown;

  /** The payload's JSON value, as decodeJson gives it; throws ProtocolError for malformed JSON. */
  decode(payload: Buffer): unknown {
    const length = payload.length;
    const bytes = this.bytes;
    if (length === this.length && bytes !== undefined && payload.compare(bytes, 0, length) === 0) return copyJson(this.value);
    const value = decodeJson(payload);
    if (length > MAX_MEMO_BYTES) {
      this.length = -1;
      return value;
    }
    if (bytes === undefined || bytes.length < length) {
      // Not from Buffer's shared pool: this buffer lives as long as the session.
      this.bytes = Buffer.allocUnsafeSlow(Math.max(length, MIN_MEMO_BUFFER_BYTES));
    }
    payload.copy(this.bytes!, 0, 0, length);
    this.length = length;
    this.value = value;
    return copyJson(value);
  }
}

/** A deep copy of a JSON value (what JSON.parse makes: plain objects, arrays and primitives). */
export function copyJson(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    const copy: unknown[] = value.slice();
    for (let i = 0; i < copy.length; i++) {
      const item = copy[i];
      if (typeof item === 'object' && item !== null) copy[i] = copyJson(item);
    }
    return copy;
  }
  const copy: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  for (const key of Object.keys(copy)) {
    const item = copy[key];
    if (typeof item === 'object' && item !== null) copy[key] = copyJson(item);
  }
  return copy;
}
