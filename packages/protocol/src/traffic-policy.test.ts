import assert from 'node:assert/strict';
import { test } from 'node:test';
import { policyProblem, hasRules } from './policy.js';
import {
  MAX_HEADER_RULES,
  parseHeaderAdd,
  parseRateLimit,
  parseSize,
  parseVerifyWebhook,
  regexProblem,
  trafficSummary,
  DEFAULT_WEBHOOK_MAX_BODY,
} from './traffic-policy.js';

test('forwarding headers can be neither added nor removed, on either side', () => {
  for (const name of ['X-Forwarded-For', 'x-forwarded-proto', 'X-Svc-Identity', 'X-Forwarded-Email', 'Forwarded', 'X-Real-IP']) {
    assert.match(policyProblem({ requestHeaderAdd: [`${name}: 1.2.3.4`] })!, /^requestHeaderAdd: .* is a forwarding header the edge sets/);
    assert.match(policyProblem({ requestHeaderRemove: [name] })!, /^requestHeaderRemove: .*forwarding header/);
    assert.match(policyProblem({ responseHeaderAdd: [`${name}: x`] })!, /^responseHeaderAdd: .*forwarding header/);
    assert.match(policyProblem({ responseHeaderRemove: [name] })!, /^responseHeaderRemove: .*forwarding header/);
  }
  assert.match(policyProblem({ requestHeaderAdd: ['Content-Length: 5'] })!, /frames the message/);
});

test('header rules are bounded and split at the first colon', () => {
  assert.deepEqual(parseHeaderAdd('X-Env:  dev: blue '), { name: 'X-Env', value: 'dev: blue' });
  assert.match(parseHeaderAdd('no colon') as string, /expected "Name: value"/);
  assert.match(parseHeaderAdd('Bad Name: x') as string, /not a header name/);
  assert.match(parseHeaderAdd(`X-Long: ${'v'.repeat(2000)}`) as string, /at most 1024/);
  assert.equal(policyProblem({ requestHeaderRemove: ['Cookie'], responseHeaderAdd: ['X-Frame-Options: DENY'] }), undefined);
  const many = Array.from({ length: MAX_HEADER_RULES + 1 }, (_, i) => `X-${i}: v`);
  assert.match(policyProblem({ responseHeaderAdd: many })!, /at most 20 entries/);
});

test('a rate limit reads count/window in s, m and h, within bounds', () => {
  assert.deepEqual(parseRateLimit('100/1m'), { count: 100, windowMs: 60_000 });
  assert.deepEqual(parseRateLimit('5/h'), { count: 5, windowMs: 3_600_000 });
  assert.deepEqual(parseRateLimit('10/30s'), { count: 10, windowMs: 30_000 });
  assert.match(parseRateLimit('100') as string, /expected count\/window/);
  assert.match(parseRateLimit('0/1m') as string, /count must be 1/);
  assert.match(parseRateLimit('1/25h') as string, /1s to 24h/);
  assert.match(policyProblem({ rateLimit: { count: 5, windowMs: 10 } })!, /^rateLimit: the window/);
});

test('a webhook check names a known provider; the secret never appears in a message', () => {
  assert.deepEqual(parseVerifyWebhook('github:s3cret'), { provider: 'github', secret: 's3cret', maxBody: DEFAULT_WEBHOOK_MAX_BODY });
  const problem = parseVerifyWebhook('gitlab:s3cret') as string;
  assert.match(problem, /unknown provider "gitlab": expected one of github, stripe, slack, shopify, twilio, standard/);
  assert.ok(!problem.includes('s3cret'));
  assert.match(parseVerifyWebhook('stripe:') as string, /the secret must have/);
  assert.equal(parseSize('1MiB'), 1048576);
  assert.equal(parseSize('512KiB'), 524288);
  assert.equal(parseSize('2MB'), 2_000_000);
  assert.match(parseSize('lots') as string, /expected a size/);
  assert.match(policyProblem({ verifyWebhook: { provider: 'slack', secret: 'x', maxBody: 0 } })!, /^verifyWebhook: maxBody/);
});

test('rules need exactly one action and say which rule and key is wrong', () => {
  assert.equal(
    policyProblem({
      rules: [
        { match: { path: '/old' }, redirect: { to: '/new', status: 301 } },
        { match: { method: ['GET'], header: { name: 'X-Debug' } }, respond: { status: 418, headers: { 'X-A': 'b' }, body: 'tea' } },
        { match: { pathRegex: '^/api/(.*)$' }, rewrite: { from: '^/api/(.*)$', to: '/v2/$1' } },
      ],
    }),
    undefined,
  );
  assert.equal(policyProblem({ rules: [{ match: { path: '/x' } }] }), 'rules[0].action: exactly one of redirect, respond, rewrite');
  assert.equal(
    policyProblem({ rules: [{ redirect: { to: '/a' } }, { redirect: { to: 'ftp://x' } }] }),
    'rules[1].redirect.to: expected a path (/…) or an http(s):// URL',
  );
  assert.equal(
    policyProblem({ rules: [{ redirect: { to: '/a', status: 303 } }] }),
    'rules[0].redirect.status: expected 301, 302, 307 or 308',
  );
  assert.equal(policyProblem({ rules: [{ respond: { status: 99 } }] }), 'rules[0].respond.status: expected 200 to 599');
  assert.match(policyProblem({ rules: [{ match: { method: ['get'] }, respond: { status: 200 } }] })!, /^rules\[0\]\.match\.method/);
  assert.match(policyProblem({ rules: [{ rewrite: { from: '(', to: '/' } }] })!, /^rules\[0\]\.rewrite\.from: not a regular expression/);
});

test('rule regexes are RE2 patterns, and templates refer only to groups their pattern has', () => {
  assert.equal(regexProblem('^/api/(v[0-9]+)/(.*)$'), undefined);
  // Exponential in a backtracking engine, linear in RE2: accepted.
  for (const pattern of ['(a+)+$', '(a|aa)*b', '.*a.*b.*c', '^/(\\w?\\w?){13}$']) assert.equal(regexProblem(pattern), undefined, pattern);
  assert.match(regexProblem('(a)\\1')!, /no backreferences/);
  assert.match(regexProblem('x'.repeat(201))!, /1 to 200 characters/);
  const rule = (redirectTo: string, pathRegex?: string) => ({
    rules: [{ match: pathRegex ? { pathRegex } : {}, redirect: { to: redirectTo } }],
  });
  assert.equal(policyProblem(rule('/d/$1', '^/docs/(\\w+)$')), undefined);
  assert.equal(
    policyProblem(rule('/d/$2', '^/docs/(\\w+)$')),
    'rules[0].redirect.to: $2 refers to group 2, the pattern has 1 group (pathRegex)',
  );
  assert.equal(policyProblem(rule('/d/$1')), 'rules[0].redirect.to: $1 refers to a group of pathRegex, and the rule has none');
  assert.equal(policyProblem(rule('/cost/$$5')), undefined);
  assert.equal(
    policyProblem({ rules: [{ rewrite: { from: '^/api/(.*)$', to: '/v2/$1/$5' } }] }),
    'rules[0].rewrite.to: $5 refers to group 5, the pattern has 1 group (from)',
  );
});

test('the summary holds no secret and no header value', () => {
  const policy = {
    requestHeaderAdd: ['X-Api-Key: topsecret'],
    verifyWebhook: { provider: 'stripe' as const, secret: 'whsec_abc', maxBody: 1024 },
    rateLimit: { count: 5, windowMs: 60_000 },
    rules: [{ match: { path: '/old', method: ['GET'] }, redirect: { to: '/new', status: 301 as const } }],
  };
  assert.ok(hasRules(policy));
  const summary = trafficSummary(policy);
  const text = JSON.stringify(summary);
  assert.ok(!text.includes('topsecret') && !text.includes('whsec_abc'));
  assert.deepEqual(summary.requestHeaderAdd, ['X-Api-Key']);
  assert.deepEqual(summary.verifyWebhook, { provider: 'stripe', maxBody: 1024 });
  assert.deepEqual(summary.rules, ['GET /old* → redirect 301 /new']);
});
