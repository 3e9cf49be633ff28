import assert from 'node:assert/strict';
import { test } from 'node:test';
import { certificateView, domainView } from './domain-view.js';

test('domainView shows the record to publish and the certificate state, with ISO times', () => {
  const view = domainView({
    id: 'dom_x',
    accountId: 'acc_y',
    host: 'app.example.com',
    state: 'verified',
    txtValue: 'svc-verify-abc',
    verifiedAt: Date.UTC(2030, 0, 2),
    createdAt: Date.UTC(2030, 0, 1),
    certState: 'failed',
    certError: 'connection refused',
    certExpiresAt: undefined,
  });
  assert.deepEqual(view, {
    id: 'dom_x',
    host: 'app.example.com',
    state: 'verified',
    verified: true,
    txtRecord: { type: 'TXT', name: '_svcrouter.app.example.com', value: 'svc-verify-abc' },
    verifiedAt: '2030-01-02T00:00:00.000Z',
    createdAt: '2030-01-01T00:00:00.000Z',
    certificate: { state: 'failed', error: 'connection refused', expiresAt: null },
  });
  assert.ok(!JSON.stringify(view).includes('acc_y'));
});

test('certificateView never carries a PEM', () => {
  const view = certificateView({ host: 'a.example.com', certPem: 'CERT', keyPem: 'SECRET KEY', expiresAt: 0, issuedAt: 0 });
  assert.ok(!JSON.stringify(view).includes('SECRET') && !JSON.stringify(view).includes('CERT'));
  assert.equal(view.host, 'a.example.com');
});
