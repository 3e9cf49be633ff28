import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { expiredSessionCookie, readCookie, readSessionCookie, sessionCookie } from './cookies.js';

describe('cookies', () => {
  it('readCookie finds a cookie among others, first occurrence, quotes removed', () => {
    assert.equal(readCookie('a=1; svc_session=svs_x; b=2', 'svc_session'), 'svs_x');
    assert.equal(readCookie('svc_session="svs_q"', 'svc_session'), 'svs_q');
    assert.equal(readCookie('svc_session=first; svc_session=second', 'svc_session'), 'first');
    assert.equal(readCookie('xsvc_session=no; other', 'svc_session'), undefined);
    assert.equal(readCookie(undefined, 'svc_session'), undefined);
    assert.equal(readCookie('', 'svc_session'), undefined);
  });

  it('sessionCookie is host-only, HttpOnly, SameSite=Lax, Path=/; over TLS Secure and named __Host-', () => {
    const plain = sessionCookie('svs_abc', { secure: false, maxAgeSeconds: 60 });
    assert.equal(plain, 'svc_session=svs_abc; Path=/; HttpOnly; SameSite=Lax; Max-Age=60');
    assert.doesNotMatch(plain, /domain=/i);
    assert.equal(
      sessionCookie('svs_abc', { secure: true, maxAgeSeconds: 60 }),
      '__Host-svc_session=svs_abc; Path=/; HttpOnly; SameSite=Lax; Max-Age=60; Secure',
    );
  });

  it('expiredSessionCookie clears the value with Max-Age=0', () => {
    assert.equal(expiredSessionCookie(true), '__Host-svc_session=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0; Secure');
    assert.equal(expiredSessionCookie(false), 'svc_session=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0');
  });

  it('readSessionCookie reads the name of the scheme, and nothing when the name comes twice', () => {
    assert.equal(readSessionCookie('a=1; svc_session=svs_x', false), 'svs_x');
    assert.equal(readSessionCookie('a=1; svc_session=svs_x', true), undefined);
    assert.equal(readSessionCookie('__Host-svc_session=svs_y; svc_session=svs_x', true), 'svs_y');
    assert.equal(readSessionCookie('svc_session=svs_tossed; svc_session=svs_x', false), undefined);
    assert.equal(readSessionCookie(undefined, false), undefined);
  });
});
