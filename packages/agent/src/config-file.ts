import { readFileSync } from 'node:fs';
import { isMap, LineCounter, parseDocument, type Document, type Node } from 'yaml';
import type { z } from 'zod';
import { POLICY_BLOCK_KEYS } from './config-policy.js';
import { ConfigFileSchema, InspectorSchema, TunnelConfigSchema, type ConfigFile } from './config-schema.js';

/** One problem in a config file, located for the person fixing it. */
export interface ConfigProblem {
  line: number;
  column: number;
  /** Dotted key path, e.g. `tunnels.web.addr`; empty for the file as a whole. */
  key: string;
  message: string;
}

/** A config file read: its content, or every problem found. */
export type ConfigResult = { ok: true; config: ConfigFile } | { ok: false; problems: ConfigProblem[] };

/** Reads and validates a config file; an unreadable file is one problem at line 1. */
export function loadConfigFile(path: string): ConfigResult {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    return { ok: false, problems: [{ line: 1, column: 1, key: '', message: `cannot read the file (${code})` }] };
  }
  return parseConfig(text);
}

/**
 * Parses YAML text into a validated config. YAML errors and schema errors both come back with
 * the line and column of the key at fault, so `svc config check` can point at it.
 */
export function parseConfig(text: string): ConfigResult {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length > 0) {
    return {
      ok: false,
      problems: doc.errors.map((error) => {
        const at = lines.linePos(error.pos[0]);
        return { line: at.line, column: at.col, key: '', message: error.message.split('\n')[0]! };
      }),
    };
  }
  let content: unknown;
  try {
    content = doc.toJS();
  } catch (error) {
    // toJS() refuses aliases that expand past its limit (a "billion laughs" file) by throwing.
    const message =
      error instanceof ReferenceError ? 'too many alias expansions: anchors and aliases that multiply are refused' : String(error);
    return { ok: false, problems: [{ line: 1, column: 1, key: '', message }] };
  }
  const parsed = ConfigFileSchema.safeParse(content ?? {});
  if (parsed.success) return { ok: true, config: parsed.data };
  const problems = parsed.error.issues.flatMap((issue) => locate(issue, doc, lines));
  problems.sort((a, b) => a.line - b.line || a.column - b.column);
  return { ok: false, problems };
}

/** Formats problems as `file:line:column key: message`, one a line. */
export function formatProblems(file: string, problems: ConfigProblem[]): string {
  return problems.map((p) => `${file}:${p.line}:${p.column} ${p.key ? `${p.key}: ` : ''}${p.message}`).join('\n');
}

/** Where a schema issue points: the key itself for an unknown key, the value otherwise. */
function locate(issue: z.core.$ZodIssue, doc: Document, lines: LineCounter): ConfigProblem[] {
  const path = issue.path.map((part) => (typeof part === 'symbol' ? String(part) : part));
  if (issue.code === 'unrecognized_keys') {
    return issue.keys.map((key) => {
      const { line, column } = keyPosition(doc, path, key, lines);
      return { line, column, key: [...path, key].join('.'), message: `unknown key (expected one of: ${expectedKeys(path)})` };
    });
  }
  if (issue.code === 'invalid_key') {
    // A bad name (a tunnel's): point at the key, and say what a name is rather than zod's "Invalid key in record".
    const key = String(path.at(-1));
    const { line, column } = keyPosition(doc, path.slice(0, -1), key, lines);
    return [{ line, column, key: path.join('.'), message: issue.issues[0]?.message ?? issue.message }];
  }
  const node = nodeAt(doc, path);
  const offset = node?.range?.[0] ?? keyPosition(doc, path.slice(0, -1), String(path.at(-1)), lines).offset;
  const at = lines.linePos(offset);
  // A key the file does not have at all gets one word, whatever the schema said about the type.
  const message = path.length > 0 && !doc.hasIn(path) ? 'required' : issue.message;
  return [{ line: at.line, column: at.col, key: path.join('.'), message }];
}

function nodeAt(doc: Document, path: Array<string | number>): Node | undefined {
  if (path.length === 0) return (doc.contents as Node | null) ?? undefined;
  const node = doc.getIn(path, true);
  return node !== null && typeof node === 'object' && 'range' in node ? (node as Node) : undefined;
}

/** Position of `key` inside the map at `path`, or of the map itself when the key is absent. */
function keyPosition(doc: Document, path: Array<string | number>, key: string, lines: LineCounter) {
  const map = nodeAt(doc, path);
  let offset = map?.range?.[0] ?? 0;
  if (map && isMap(map)) {
    const pair = map.items.find((item) => String((item.key as { value?: unknown } | null)?.value) === key);
    const keyNode = pair?.key as Node | undefined;
    if (keyNode?.range) offset = keyNode.range[0];
  }
  const at = lines.linePos(offset);
  return { line: at.line, column: at.col, offset };
}

/** The keys allowed where an unknown one was found, for the error message. */
function expectedKeys(path: Array<string | number>): string {
  if (path.length === 0) return Object.keys(ConfigFileSchema.shape).join(', ');
  if (path.at(-1) === 'policy') return Object.keys(POLICY_BLOCK_KEYS).join(', ');
  const schema = path[0] === 'inspector' ? InspectorSchema : TunnelConfigSchema;
  return Object.keys(schema.shape).join(', ');
}
