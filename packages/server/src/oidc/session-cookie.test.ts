import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { SESSION_COOKIE, SIGN_IN_COOKIE, SessionCookies, cookieOf, edgeCookieName, setCookie, type Session } from './session-cookie.js';

// The sealed session cookie alone: what opens, and every way a changed value must not.
describe('session cookies', () => {
  const NOW = 1_800_000_000_000;
  const HOST = 'app.tunnels.test';
  const session: Session = {
    id: 'ses_1',
    host: HOST,
    provider: 'idp',
    owner: 'own',
    sub: 'sub-1',
    email: 'alice@example.com',
    expiresAt: NOW + 60_000,
  };
  const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  const withCharAt = (value: string, index: number, char: string) => `${value.slice(0, index)}${char}${value.slice(index + 1)}`;

  it('opens its own value on its host until it expires', () => {
    const cookies = new SessionCookies(randomBytes(32));
    const value = cookies.seal(session);
    assert.deepEqual(cookies.open(value, HOST, NOW), session);
    assert.equal(cookies.open(value, 'other.tunnels.test', NOW), undefined, 'another host');
    assert.equal(cookies.open(value, HOST, session.expiresAt), undefined, 'expired');
    assert.equal(new SessionCookies(randomBytes(32)).open(value, HOST, NOW), undefined, 'another key');
  });

  it('refuses every other spelling of the MAC, the spare bits of its last character too', () => {
    const cookies = new SessionCookies(randomBytes(32));
    const value = cookies.seal(session);
    const macStart = value.indexOf('.') + 1;
    let tried = 0;
    // Every character of the MAC replaced by every other base64url character: 43 × 63 values.
    for (let index = macStart; index < value.length; index++) {
      for (const char of BASE64URL) {
        if (char === value[index]) continue;
        tried++;
        assert.equal(cookies.open(withCharAt(value, index, char), HOST, NOW), undefined, `MAC character ${index - macStart} as ${char}`);
      }
    }
    assert.equal(tried, (value.length - macStart) * 63);
    assert.equal(cookies.open(`${value}=`, HOST, NOW), undefined, 'padded');
    assert.equal(cookies.open(`${value}A`, HOST, NOW), undefined, 'longer');
    assert.equal(cookies.open(value.slice(0, -1), HOST, NOW), undefined, 'shorter');
  });

  it('refuses a changed payload under the old MAC, and values that are not cookies', () => {
    const cookies = new SessionCookies(randomBytes(32));
    const value = cookies.seal(session);
    const [payload, mac] = value.split('.') as [string, string];
    const moved = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload, 'base64url').toString()), h: 'evil.tunnels.test' }));
    assert.equal(cookies.open(`${moved.toString('base64url')}.${mac}`, 'evil.tunnels.test', NOW), undefined);
    for (const junk of ['', 'x', '.', 'a.b.c', '%%%', `${payload}.`, `.${mac}`, 'A'.repeat(10_000)]) {
      assert.equal(cookies.open(junk, HOST, NOW), undefined, junk.slice(0, 20));
    }
  });

  it('finds the cookie among several Cookie headers, and takes none sent twice', () => {
    assert.equal(cookieOf(['cookie', 'a=1', 'cookie', 'b=2; __svc_session=v.m; c=3'], '__svc_session'), 'v.m');
    assert.equal(cookieOf(['cookie', 'a=1'], '__svc_session'), undefined);
    assert.equal(cookieOf(['cookie', '__svc_session=x', 'Cookie', '__svc_session=v.m'], '__svc_session'), undefined);
    assert.equal(cookieOf(['cookie', '__svc_session=x; __svc_session=x'], '__svc_session'), undefined);
    assert.equal(cookieOf(['cookie', '__Host-svc_session=v.m; __svc_session=x'], '__Host-svc_session'), 'v.m');
  });

  it('names the cookies with the __Host- prefix over HTTPS, for Path=/ and Secure', () => {
    assert.equal(edgeCookieName(SESSION_COOKIE, false), '__svc_session');
    assert.equal(edgeCookieName(SESSION_COOKIE, true), '__Host-svc_session');
    assert.equal(edgeCookieName(SIGN_IN_COOKIE, true), '__Host-svc_signin');
    assert.equal(
      setCookie(SIGN_IN_COOKIE, 'b', 600, false, '/.svc/oidc/return'),
      '__svc_signin=b; Path=/.svc/oidc/return; Max-Age=600; HttpOnly; SameSite=Lax',
    );
    // A __Host- cookie with another path would be dropped by the browser: it is always Path=/.
    assert.equal(
      setCookie(SIGN_IN_COOKIE, 'b', 600, true, '/.svc/oidc/return'),
      '__Host-svc_signin=b; Path=/; Max-Age=600; HttpOnly; SameSite=Lax; Secure',
    );
    assert.equal(
      setCookie(SESSION_COOKIE, 'v.m', 3600.7, true),
      '__Host-svc_session=v.m; Path=/; Max-Age=3600; HttpOnly; SameSite=Lax; Secure',
    );
  });
});
