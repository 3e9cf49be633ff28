/*
 * The regular expressions of edge rules (`pathRegex`, a rewrite's `from`) and the `$1` references
 * of their templates. One engine for both sides: the agent checks a pattern with the same
 * compiler the edge matches it with, so what passes the check is exactly what runs.
 *
 * The engine is RE2 (the pure-JS port `re2js`), not V8's RegExp: V8 backtracks, so a pattern such
 * as `^/(\w?\w?){13}$` costs time exponential in the path, and no check of a pattern's shape
 * catches every such case. RE2 matches in time linear in the path; what it gives up for that is
 * lookarounds and backreferences, which it refuses when the pattern is compiled.
 */
import { RE2JS } from 're2js';

/** Longest pattern, in characters. */
export const MAX_REGEX_LENGTH = 200;
/**
 * Largest compiled pattern, in RE2 instructions (its `programSize`). Matching costs the path's
 * length times the instructions alive at once, so this bounds the work per path character; it
 * also bounds the time the edge spends compiling a tunnel's rules at bind.
 */
export const MAX_REGEX_PROGRAM = 1000;

/** Where a pattern matched: the match's bounds and its groups (`groups[0]` is the whole match). */
export interface RegexMatch {
  start: number;
  end: number;
  /** Group N's text, or undefined when the group took no part in the match. */
  groups: readonly (string | undefined)[];
}

/** A rule's compiled pattern. */
export class RuleRegex {
  /** Capturing groups in the pattern. */
  readonly groupCount: number;

  private constructor(private readonly re: RE2JS) {
    this.groupCount = re.groupCount();
  }

  /** The compiled pattern, or the reason it is refused, as a sentence. */
  static compile(pattern: unknown): RuleRegex | string {
    if (typeof pattern !== 'string' || pattern.length === 0 || pattern.length > MAX_REGEX_LENGTH) {
      return `expected a regular expression of 1 to ${MAX_REGEX_LENGTH} characters`;
    }
    // Compiling expands counted repeats, so a short pattern can take long to compile: estimate first.
    if (expandedSize(pattern) > MAX_REGEX_PROGRAM) return tooLarge();
    let re: RE2JS;
    try {
      re = RE2JS.compile(pattern);
    } catch (error) {
      const reason = (error as Error).message.replace(/^error parsing regexp: /, '');
      return `not a regular expression RE2 accepts (no lookarounds, no backreferences): ${reason}`;
    }
    if (re.programSize() > MAX_REGEX_PROGRAM) return tooLarge();
    return new RuleRegex(re);
  }

  /** Whether the pattern matches anywhere in `text` (the cheapest question: no groups are kept). */
  test(text: string): boolean {
    return this.re.test(text);
  }

  /** The first match in `text`, with its groups, or undefined. */
  exec(text: string): RegexMatch | undefined {
    // Like RegExp's exec: group texts (undefined for a group that took no part), `index` in UTF-16 units.
    const found = this.re.exec(text) as ((string | undefined)[] & { index: number }) | null;
    if (found === null) return undefined;
    return { start: found.index, end: found.index + found[0]!.length, groups: found };
  }
}

function tooLarge(): string {
  return `the pattern is too large: at most ${MAX_REGEX_PROGRAM} RE2 instructions (fewer or smaller counted repeats {n,m})`;
}

/**
 * A lower estimate of the compiled size: one per atom, operator and anchor, each counted repeat
 * `x{n,m}` as m copies of x (nested repeats multiply). Used only to refuse, before compiling, a
 * pattern whose expansion alone would exceed the limit.
 */
function expandedSize(pattern: string): number {
  // Per open group: its size so far and the size of the last atom in it (what a quantifier repeats).
  const stack: { size: number; last: number }[] = [{ size: 0, last: 0 }];
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const char = pattern[i]!;
    const top = stack[stack.length - 1]!;
    if (char === '\\') {
      i++;
      if (!inClass) top.size += top.last = 1;
      continue;
    }
    if (inClass) {
      if (char === ']') inClass = false;
      continue;
    }
    if (char === '[') {
      inClass = true;
      if (pattern[i + 1] === ']') i++;
      top.size += top.last = 1;
    } else if (char === '(') {
      stack.push({ size: 0, last: 0 });
    } else if (char === ')' && stack.length > 1) {
      const group = stack.pop()!;
      const parent = stack[stack.length - 1]!;
      parent.size += parent.last = group.size;
    } else if (char === '{') {
      const repeat = /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(i));
      if (repeat === null) {
        top.size += top.last = 1;
        continue;
      }
      const most = Math.max(Number(repeat[1]), Number(repeat[3] || 0));
      top.size += top.last * Math.max(most - 1, 0) + 1;
      top.last = 0;
      i += repeat[0].length - 1;
    } else {
      top.size += 1;
      top.last = char === '*' || char === '+' || char === '?' || char === '|' ? 0 : 1;
    }
  }
  return stack.reduce((sum, group) => sum + group.size, 0);
}

/** The highest `$N` a template refers to (0: none). */
export function highestReference(template: string): number {
  let highest = 0;
  for (let i = 0; i < template.length - 1; i++) {
    if (template.charCodeAt(i) !== 36 /* $ */) continue;
    const next = template.charCodeAt(i + 1);
    if (next >= 49 && next <= 57 /* 1-9 */) highest = Math.max(highest, next - 48);
    i++; // `$$` and `$N` are read as a pair
  }
  return highest;
}

/** Why a template's references do not fit a pattern with `groupCount` groups, or undefined. */
export function referenceProblem(template: string, groupCount: number): string | undefined {
  const highest = highestReference(template);
  if (highest <= groupCount) return undefined;
  const has = groupCount === 1 ? '1 group' : `${groupCount} groups`;
  return `$${highest} refers to group ${highest}, the pattern has ${has}`;
}

/**
 * Fills a redirect's or a rewrite's template: `$1`…`$9` is that group's text (empty when the
 * group took no part in the match), `$$` is one `$`; any other `$` stays as it is. Templates
 * are checked against the pattern's group count, so a reference is never out of range here.
 */
export function expandTemplate(template: string, groups: readonly (string | undefined)[]): string {
  if (!template.includes('$')) return template;
  let out = '';
  for (let i = 0; i < template.length; i++) {
    const char = template[i]!;
    const next = template.charCodeAt(i + 1);
    if (char === '$' && next === 36) {
      out += '$';
      i++;
    } else if (char === '$' && next >= 49 && next <= 57) {
      out += groups[next - 48] ?? '';
      i++;
    } else out += char;
  }
  return out;
}
