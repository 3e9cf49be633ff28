import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { expiredSessionCookie, readCookie, sessionCookie } from './cookies.js';

describe('cookies', () => {
  it('readCookie finds a cookie among others, first occurrence, quotes removed', () => {
    assert.equal(readCookie('a=1; svc_session=svs_x; b=2', 'svc_session'), 'svs_x');
    assert.equal(readCookie('svc_session="svs_q"', 'svc_session'), 'svs_q');
    assert.equal(readCookie('svc_session=first; svc_session=second', 'svc_session'), 'first');
    assert.equal(readCookie('xsvc_session=no; other', 'svc_session'), undefined);
    assert.equal(readCookie(undefined, 'svc_session'), undefined);
    assert.equal(readCookie('', 'svc_session'), undefined);
  });

  it('sessionCookie is host-only, HttpOnly, SameSite=Lax, Path=/, Secure only over TLS', () => {
    const plain = sessionCookie('svs_abc', { secure: false, maxAgeSeconds: 60 });
    assert.equal(plain, 'svc_session=svs_abc; Path=/; HttpOnly; SameSite=Lax; Max-Age=60');
    assert.doesNotMatch(plain, /domain=/i);
    assert.match(sessionCookie('svs_abc', { secure: true, maxAgeSeconds: 60 }), /; Secure$/);
  });

  it('expiredSessionCookie clears the value with Max-Age=0', () => {
    assert.equal(expiredSessionCookie(true), 'svc_session=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0; Secure');
  });
});
