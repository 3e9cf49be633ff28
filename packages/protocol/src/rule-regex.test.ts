import assert from 'node:assert/strict';
import { test } from 'node:test';
import { expandTemplate, highestReference, MAX_REGEX_PROGRAM, referenceProblem, RuleRegex } from './rule-regex.js';

function compiled(pattern: string): RuleRegex {
  const regex = RuleRegex.compile(pattern);
  assert.ok(regex instanceof RuleRegex, `${pattern}: ${String(regex)}`);
  return regex;
}

test('patterns that backtrack exponentially in V8 match a hostile path at once', () => {
  // In V8 this pattern takes seconds to minutes on such a path; RE2 answers in linear time.
  const nested = compiled('^/(\\w?\\w?){13}$');
  const hostile = `/${'a'.repeat(28)}!`;
  assert.equal(nested.test(hostile), false);
  assert.equal(nested.exec(hostile), undefined);
  assert.equal(nested.test(`/${'a'.repeat(26)}`), true);
  const repeated = compiled('(a+)+$');
  assert.equal(repeated.exec(`${'a'.repeat(30)}!`), undefined);
  // Seven counted repeats compile past the size limit: refused, with the reason.
  const counted = RuleRegex.compile('^.{0,99}.{0,99}.{0,99}.{0,99}.{0,99}.{0,99}.{0,99}x$');
  assert.equal(counted, `the pattern is too large: at most ${MAX_REGEX_PROGRAM} RE2 instructions (fewer or smaller counted repeats {n,m})`);
  assert.equal(compiled('^.{0,99}.{0,99}.{0,99}x$').test(`/${'a'.repeat(29)}`), false);
});

test('RE2 refuses lookarounds and backreferences; long and huge patterns are refused before compiling', () => {
  assert.match(
    RuleRegex.compile('(a)\\1') as string,
    /^not a regular expression RE2 accepts \(no lookarounds, no backreferences\): invalid escape/,
  );
  assert.match(RuleRegex.compile('^(?=a)') as string, /not a regular expression RE2 accepts.*\(\?=/);
  assert.match(RuleRegex.compile('(') as string, /missing closing \)/);
  assert.match(RuleRegex.compile('x'.repeat(201)) as string, /1 to 200 characters/);
  assert.match(RuleRegex.compile(42) as string, /1 to 200 characters/);
  assert.match(RuleRegex.compile('.{0,1000}'.repeat(20)) as string, /too large/);
  assert.match(RuleRegex.compile('(?:(?:.{0,9}){0,9}){0,9}') as string, /too large/);
});

test('a match gives its bounds and groups, an unmatched group as undefined', () => {
  const regex = compiled('/(x+)(y)?');
  assert.equal(regex.groupCount, 2);
  assert.deepEqual(
    { ...regex.exec('/é/xx/z')!, groups: [...regex.exec('/é/xx/z')!.groups] },
    {
      start: 2,
      end: 5,
      groups: ['/xx', 'xx', undefined],
    },
  );
});

test('templates expand $1 to $9 and $$, and nothing else', () => {
  const groups = ['/a/b', 'a', undefined, 'c'];
  assert.equal(expandTemplate('/v2/$1/$3', groups), '/v2/a/c');
  assert.equal(expandTemplate('/$2x', groups), '/x');
  assert.equal(expandTemplate('/$$1/$10', groups), '/$1/a0');
  assert.equal(expandTemplate("/$&/$`/$'/$0/$", groups), "/$&/$`/$'/$0/$");
  assert.equal(expandTemplate('/plain', groups), '/plain');
  assert.equal(highestReference('/$$9/$2/$1'), 2);
  assert.equal(highestReference('/$0/$x/$'), 0);
  assert.equal(referenceProblem('/$1/$2', 2), undefined);
  assert.equal(referenceProblem('/$3', 2), '$3 refers to group 3, the pattern has 2 groups');
  assert.equal(referenceProblem('/$2', 1), '$2 refers to group 2, the pattern has 1 group');
});
