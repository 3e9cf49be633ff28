import { z } from 'zod';

/** Position in the newest-first order of captured requests: strictly older than this one. */
export interface RequestCursor {
  timestamp: number;
  id: string;
}

const CURSOR = z.strictObject({ timestamp: z.int().nonnegative(), id: z.string().min(1).max(128) });
const BASE64URL = /^[A-Za-z0-9_-]+$/;

/** The opaque `nextCursor` string: base64url of `{"timestamp":…,"id":…}`. */
export function encodeCursor(cursor: RequestCursor): string {
  return Buffer.from(JSON.stringify({ timestamp: cursor.timestamp, id: cursor.id }), 'utf8').toString('base64url');
}

/** Decodes a cursor made by encodeCursor; undefined for anything else. */
export function decodeCursor(text: string): RequestCursor | undefined {
  if (!BASE64URL.test(text)) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  const parsed = CURSOR.safeParse(json);
  return parsed.success ? parsed.data : undefined;
}
