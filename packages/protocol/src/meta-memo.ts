import { decodeJson, jsonText } from './frame.js';

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

/** A field the text memo compares with `===`: what JSON.stringify writes the same for equal values. */
type Scalar = string | number | boolean | null | undefined;

/**
 * Encodes one kind of JSON frame payload (the request heads a session opens streams with) as
 * jsonText does, remembering the last value and its text. Consecutive request heads are often
 * equal (one client asking for the same path through one tunnel), and comparing a head with
 * the last one costs a fraction of JSON.stringify. Only a plain object whose own fields are
 * scalars or arrays of scalars is remembered, and a hit needs the same keys in the same order
 * with equal values, so the text is the one JSON.stringify would write for it.
 */
export class JsonTextMemo {
  private keys: string[] = [];
  private fields: Array<Scalar | Scalar[]> = [];
  private text: string | undefined;

  encode(value: unknown): string {
    if (this.text !== undefined && this.matches(value)) return this.text;
    const text = jsonText(value);
    this.remember(value, text);
    return text;
  }

  private matches(value: unknown): boolean {
    if (typeof value !== 'object' || value === null || Object.getPrototypeOf(value) !== Object.prototype) return false;
    const { keys, fields } = this;
    let i = 0;
    // for-in also walks inherited enumerable keys, which JSON.stringify skips: any makes a miss.
    for (const key in value) {
      if (key !== keys[i]) return false;
      const field: unknown = (value as Record<string, unknown>)[key];
      const known = fields[i++];
      if (Array.isArray(known)) {
        if (!Array.isArray(field) || field.length !== known.length) return false;
        for (let j = 0; j < known.length; j++) if (field[j] !== known[j]) return false;
      } else if (field !== known) return false;
    }
    return i === keys.length;
  }

  private remember(value: unknown, text: string): void {
    this.text = undefined;
    if (text.length > MAX_MEMO_BYTES || typeof value !== 'object' || value === null) return;
    if (Object.getPrototypeOf(value) !== Object.prototype) return;
    const keys = Object.keys(value);
    const fields: Array<Scalar | Scalar[]> = [];
    for (const key of keys) {
      const field: unknown = (value as Record<string, unknown>)[key];
      if (Array.isArray(field)) {
        if (!field.every(isScalar)) return;
        fields.push(field.slice() as Scalar[]);
      } else if (isScalar(field)) fields.push(field);
      else return;
    }
    this.keys = keys;
    this.fields = fields;
    this.text = text;
  }
}

function isScalar(value: unknown): value is Scalar {
  const type = typeof value;
  return value === null || type === 'string' || type === 'number' || type === 'boolean' || type === 'undefined';
}
