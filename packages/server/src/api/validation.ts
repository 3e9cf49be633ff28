import type { z } from 'zod';
import { invalidRequest } from './errors.js';

/** Which part of the request a schema validates; it names the field in error messages. */
export type RequestPart = 'path parameter' | 'query parameter' | 'body field';

/**
 * Parses one part of a request with its schema. Throws ApiError 400 whose message names the
 * first offending field (or the unknown ones) and, for query strings, lists what is accepted.
 */
export function parsePart<S extends z.ZodType>(schema: S, value: unknown, part: RequestPart): z.output<S> {
  const result = schema.safeParse(value, { error: friendlyMessage });
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  throw invalidRequest(describeIssue(issue, part, acceptedKeys(schema)));
}

/**
 * A query string as a plain object of strings. A repeated parameter is a 400: no route takes
 * lists, and silently using the first or last value would hide a client bug.
 */
export function queryObject(query: URLSearchParams): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of query) {
    if (Object.hasOwn(out, name)) throw invalidRequest(`query parameter "${name}" is given more than once`);
    out[name] = value;
  }
  return out;
}

function acceptedKeys(schema: z.ZodType): string[] {
  const shape = (schema as unknown as { shape?: Record<string, unknown> }).shape;
  return shape ? Object.keys(shape) : [];
}

function describeIssue(issue: z.core.$ZodIssue, part: RequestPart, accepted: string[]): string {
  const field = issue.path.map(String).join('.');
  if (issue.code === 'unrecognized_keys') {
    const names = issue.keys.map((key) => `"${key}"`).join(', ');
    const plural = issue.keys.length > 1 ? 's' : '';
    if (part === 'query parameter') {
      return `unknown query parameter${plural} ${names}; this endpoint accepts ${accepted.length > 0 ? accepted.join(', ') : 'no query parameters'}`;
    }
    if (part === 'body field') return `unknown body field${plural} ${names}${field ? ` in "${field}"` : ''}`;
    return `unknown ${part}${plural} ${names}`;
  }
  if (field === '') return part === 'body field' ? `the request body ${issue.message}` : issue.message;
  return `${part} "${field}" ${issue.message}`;
}

/** Per-parse messages in plain words; a message set on the schema itself wins over these. */
function friendlyMessage(issue: z.core.$ZodRawIssue): string | undefined {
  switch (issue.code) {
    case 'invalid_type':
      if (issue.input === undefined) return 'is required';
      if (issue.expected === 'object' && (issue.path?.length ?? 0) === 0) return 'must be a JSON object';
      return `must be ${TYPE_NAMES[issue.expected] ?? `of type ${issue.expected}`}`;
    case 'too_big':
      return issue.origin === 'string' ? `must be at most ${issue.maximum} characters` : `must be at most ${issue.maximum}`;
    case 'too_small':
      return issue.origin === 'string'
        ? `must be at least ${issue.minimum} character${issue.minimum === 1 ? '' : 's'}`
        : `must be at least ${issue.minimum}`;
    case 'invalid_value':
      return `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
    case 'invalid_format':
      return `must be ${FORMATS[issue.format] ?? `a valid ${issue.format}`}`;
    default:
      return undefined;
  }
}

const TYPE_NAMES: Record<string, string> = {
  int: 'an integer',
  number: 'a number',
  string: 'a string',
  boolean: 'true or false',
  object: 'an object',
  array: 'an array',
};

const FORMATS: Record<string, string> = {
  date: 'a date as YYYY-MM-DD',
  datetime: 'an ISO 8601 timestamp such as 2025-01-31T12:00:00Z',
  regex: 'in the documented format',
};
