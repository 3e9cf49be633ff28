import { parseHeaderAdd } from '@svcrouter/protocol';

/**
 * A tunnel's header rules for one direction, compiled once per bind: the names removed (lower
 * case; an added name is removed first, so `add` sets the header rather than appending a second
 * value a visitor or the local service chose) and the pairs added after them.
 */
export class HeaderRules {
  private readonly removed: ReadonlySet<string>;
  private readonly added: readonly string[];

  constructor(add: readonly string[] | undefined, remove: readonly string[] | undefined) {
    const removed = new Set((remove ?? []).map((name) => name.toLowerCase()));
    const added: string[] = [];
    for (const entry of add ?? []) {
      // Validated by policyProblem before a bind is compiled.
      const pair = parseHeaderAdd(entry) as { name: string; value: string };
      removed.add(pair.name.toLowerCase());
      added.push(pair.name, pair.value);
    }
    this.removed = removed;
    this.added = added;
  }

  /** Flat name/value pairs with the rules applied: one pass, one new array. */
  apply(pairs: readonly string[]): string[] {
    const out: string[] = [];
    for (let i = 0; i < pairs.length; i += 2) {
      if (!this.removed.has(pairs[i]!.toLowerCase())) out.push(pairs[i]!, pairs[i + 1]!);
    }
    for (let i = 0; i < this.added.length; i++) out.push(this.added[i]!);
    return out;
  }
}

/** The rules of one direction, or undefined when the policy has none for it. */
export function headerRules(add: readonly string[] | undefined, remove: readonly string[] | undefined): HeaderRules | undefined {
  return add === undefined && remove === undefined ? undefined : new HeaderRules(add, remove);
}
