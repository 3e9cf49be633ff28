import { splitList } from '@svcrouter/sdk';

// SVC_BASIC_AUTH holds its pairs split at commas, so a password with a comma in it becomes a
// pair and a stray fragment. The fragment has no colon; saying so here, without printing it
// (it is part of a password), beats letting it through as a bad pair or a second user.

/** The user:password pairs of SVC_BASIC_AUTH, or a sentence saying why they cannot be read. */
export function envBasicAuthPairs(value: string | undefined): string[] | string {
  const pairs = splitList(value);
  const stray = pairs.findIndex((pair) => !pair.includes(':'));
  if (stray < 0) return pairs;
  const advice =
    'pairs are split at commas, so a password there cannot contain one; give such a password with --basic-auth (repeatable) or basicAuth in svc.yml';
  if (stray === 0) return `SVC_BASIC_AUTH: its first entry has no colon, so it is not a user:password pair; ${advice}`;
  const previous = pairs[stray - 1]!;
  const user = previous.slice(0, previous.indexOf(':'));
  return `SVC_BASIC_AUTH: the text after a comma following the password of "${user}" has no colon, so it is not a user:password pair; ${advice}`;
}
