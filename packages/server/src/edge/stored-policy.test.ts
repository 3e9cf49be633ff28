import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { SecretBox } from '../webhooks/index.js';
import { storedPolicy, UNSTORED_SECRET } from './stored-policy.js';

const policy = {
  rateLimit: { count: 5, windowMs: 60_000 },
  verifyWebhook: { provider: 'github' as const, secret: 'gh-secret-value', maxBody: 1024 },
};

test('a webhook secret is stored sealed, and opens back to itself with the node key', () => {
  const box = new SecretBox(randomBytes(32));
  const stored = storedPolicy(policy, (plain) => box.seal(plain));
  assert.ok(!stored.includes('gh-secret-value'));
  const parsed = JSON.parse(stored) as typeof policy;
  assert.equal(box.open(parsed.verifyWebhook.secret), 'gh-secret-value');
  assert.deepEqual(
    { ...parsed, verifyWebhook: { ...parsed.verifyWebhook, secret: 'x' } },
    { ...policy, verifyWebhook: { ...policy.verifyWebhook, secret: 'x' } },
  );
});

test('without a sealing key the secret is not stored at all; a policy without one is stored as is', () => {
  assert.equal((JSON.parse(storedPolicy(policy, undefined)) as typeof policy).verifyWebhook.secret, UNSTORED_SECRET);
  assert.equal(storedPolicy({ cidrAllow: ['10.0.0.0/8'] }, undefined), '{"cidrAllow":["10.0.0.0/8"]}');
});
