import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { withIdentity, withoutEdgeCookies } from './forwarding.js';

// The edge's own cookies (the sign-in's, named __svc_… over HTTP and __Host-svc_… over HTTPS)
// never reach the local service of a single sign-on tunnel; the service's own cookies do.
describe('the edge cookies taken out of a forwarded request', () => {
  it('removes both names of the edge cookies and keeps every other cookie in its order', () => {
    assert.equal(withoutEdgeCookies('a=1; __svc_session=v.m; b=2'), 'a=1; b=2');
    assert.equal(withoutEdgeCookies('__Host-svc_session=v.m; a=1; __Host-svc_signin=x'), 'a=1');
    assert.equal(withoutEdgeCookies('__svc_signin=x;__Host-svc_session=y'), '');
    // The service's own __Host- cookies are its business.
    assert.equal(withoutEdgeCookies('__Host-app=1; svc_session=2'), '__Host-app=1; svc_session=2');
    assert.equal(withoutEdgeCookies('plain=1'), 'plain=1');
  });

  it('removes them from a request built on another node too, and sets the identity headers once', () => {
    const headers = withIdentity(
      ['host', 'app.tunnels.test', 'cookie', 'a=1; __Host-svc_session=v.m', 'x-svc-identity', 'forged', 'cookie', '__svc_signin=x'],
      { token: 'tok', email: 'a@example.com' },
    );
    assert.deepEqual(headers, ['host', 'app.tunnels.test', 'cookie', 'a=1', 'x-svc-identity', 'tok', 'x-forwarded-email', 'a@example.com']);
  });
});
