import { expandTemplate, highestReference, RuleRegex, type TrafficRule } from '@svcrouter/protocol';
import { normalizeRulePath } from './rule-path.js';
import type { Reply } from './sign-in.js';

/** What the edge rules need of a request. */
export interface RuleRequest {
  method: string;
  /** The request target: path and query. */
  target: string;
  /** Flat name/value pairs. */
  headers: readonly string[];
}

/** What the rules did: answered (a reply), changed the target (a rewrite), or nothing (undefined). */
export type RuleOutcome = { reply: Reply } | { target: string } | undefined;

interface CompiledRule {
  path: string | undefined;
  pathRegex: RuleRegex | undefined;
  /** The redirect refers to pathRegex's groups: they must be read, not only tested. */
  needsGroups: boolean;
  methods: readonly string[] | undefined;
  header: { name: string; value: string | undefined } | undefined;
  rule: TrafficRule;
  rewriteFrom: RuleRegex | undefined;
}

const NO_GROUPS: readonly (string | undefined)[] = [];

/**
 * A tunnel's edge rules, in order: the first that answers (redirect, respond) ends the request; a
 * rewrite changes the path (the query is kept) and the rules after it see the new one. Rules see
 * the path normalised (rule-path.ts); the target forwarded is the visitor's unless a rewrite
 * made a new one. Regexes run on RE2 (rule-regex.ts): linear in the path, whatever the pattern.
 */
export class EdgeRules {
  private readonly rules: CompiledRule[];

  constructor(rules: readonly TrafficRule[]) {
    this.rules = rules.map((rule) => ({
      path: rule.match?.path,
      pathRegex: rule.match?.pathRegex !== undefined ? compile(rule.match.pathRegex) : undefined,
      needsGroups: rule.redirect !== undefined && highestReference(rule.redirect.to) > 0,
      methods: rule.match?.method,
      header: rule.match?.header ? { name: rule.match.header.name.toLowerCase(), value: rule.match.header.value } : undefined,
      rule,
      rewriteFrom: rule.rewrite ? compile(rule.rewrite.from) : undefined,
    }));
  }

  /** Runs the rules over one request. */
  evaluate(request: RuleRequest): RuleOutcome {
    let target = request.target;
    let query = target.indexOf('?');
    let path = normalizeRulePath(query < 0 ? target : target.slice(0, query));
    let rewritten = false;
    for (const compiled of this.rules) {
      const groups = matches(compiled, request, path);
      if (groups === undefined) continue;
      const { rule } = compiled;
      if (rule.redirect) {
        const location = locationOf(expandTemplate(rule.redirect.to, groups), rule.redirect.to);
        return { reply: redirect(location, rule.redirect.status ?? 302) };
      }
      if (rule.respond) return { reply: respond(rule.respond) };
      if (compiled.rewriteFrom) {
        // `from` replaces its first match; a path it does not match goes on unchanged.
        const found = compiled.rewriteFrom.exec(path);
        if (found === undefined) continue;
        const next = path.slice(0, found.start) + expandTemplate(rule.rewrite!.to, found.groups) + path.slice(found.end);
        // A rewrite never makes a target that is not a path; the visitor's query is kept, after the rule's own.
        const rewrittenPath = next.startsWith('/') ? next : `/${next}`;
        const visitorQuery = query < 0 ? '' : target.slice(query + 1);
        target = visitorQuery === '' ? rewrittenPath : `${rewrittenPath}${rewrittenPath.includes('?') ? '&' : '?'}${visitorQuery}`;
        query = target.indexOf('?');
        path = normalizeRulePath(query < 0 ? target : target.slice(0, query));
        rewritten = true;
      }
    }
    return rewritten ? { target } : undefined;
  }
}

/** A pattern policyProblem accepted; one it refused never reaches the edge, so this does not fail. */
function compile(pattern: string): RuleRegex {
  const compiled = RuleRegex.compile(pattern);
  if (typeof compiled === 'string') throw new Error(`edge rule regex ${JSON.stringify(pattern)}: ${compiled}`);
  return compiled;
}

/** The regex's groups (or an empty list) when the rule matches, else undefined. */
function matches(compiled: CompiledRule, request: RuleRequest, path: string): readonly (string | undefined)[] | undefined {
  if (compiled.methods !== undefined && !compiled.methods.includes(request.method)) return undefined;
  if (compiled.path !== undefined && !hasPrefix(path, compiled.path)) return undefined;
  if (compiled.header !== undefined && !hasHeader(request.headers, compiled.header.name, compiled.header.value)) return undefined;
  if (compiled.pathRegex === undefined) return NO_GROUPS;
  // Testing alone is the cheaper question; the groups are read only when the redirect uses them.
  if (!compiled.needsGroups) return compiled.pathRegex.test(path) ? NO_GROUPS : undefined;
  return compiled.pathRegex.exec(path)?.groups;
}

/** `/api` is a prefix of `/api` and `/api/x`, not of `/apix`; `/api/` of `/api/x` only. */
function hasPrefix(path: string, prefix: string): boolean {
  if (!path.startsWith(prefix)) return false;
  return path.length === prefix.length || prefix.endsWith('/') || path.charCodeAt(prefix.length) === 47; /* '/' */
}

function hasHeader(pairs: readonly string[], name: string, value: string | undefined): boolean {
  for (let i = 0; i < pairs.length; i += 2) {
    if (pairs[i]!.toLowerCase() === name && (value === undefined || pairs[i + 1] === value)) return true;
  }
  return false;
}

/**
 * The Location of a redirect: a path template stays a path on this host once expanded (a
 * visitor's `/go//evil.example` would otherwise make `//evil.example`, another site), and
 * characters a header cannot carry are percent-encoded as UTF-8, as a browser would send them.
 */
export function locationOf(expanded: string, template: string): string {
  const path = template.startsWith('/') && !template.startsWith('//');
  const location = path ? expanded.replace(/^[/\\]+/, '/') : expanded;
  return location.replace(/[^\x21-\x7e]+/g, (run) => `%${Buffer.from(run, 'utf8').toString('hex').toUpperCase().match(/../g)!.join('%')}`);
}

function redirect(to: string, status: number): Reply {
  const body = `Redirecting to ${to}\n`;
  return {
    status,
    headers: {
      location: to,
      'content-type': 'text/plain; charset=utf-8',
      'content-length': String(Buffer.byteLength(body)),
      'cache-control': 'no-store',
    },
    body,
  };
}

function respond(action: NonNullable<TrafficRule['respond']>): Reply {
  // 204 and 304 have no body to send.
  const body = action.status === 204 || action.status === 304 ? '' : (action.body ?? '');
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(action.headers ?? {})) headers[name.toLowerCase()] = value;
  headers['content-length'] = String(Buffer.byteLength(body));
  if (headers['content-type'] === undefined && body !== '') headers['content-type'] = 'text/plain; charset=utf-8';
  return { status: action.status, headers, body };
}
