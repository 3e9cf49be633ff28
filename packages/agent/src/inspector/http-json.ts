import type { IncomingMessage, ServerResponse } from 'node:http';

/** A JSON answer with the inspector's security headers. */
export type Send = (response: ServerResponse, status: number, body: unknown) => void;

/** The request body as text, or undefined past `maxBytes` (reading stops there). */
export async function readBody(request: IncomingMessage, maxBytes: number): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The error body of every refusal: `{ error, message }`, as the REST API answers. */
export function apiError(code: string, message: string): { error: string; message: string } {
  return { error: code, message };
}
