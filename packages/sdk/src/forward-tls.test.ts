import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { checkedTlsOptions } from './forward-tls.js';

// The agent's own certificate and key (--tls-cert/--tls-key) are checked at start: a pair that
// does not load or does not match would otherwise fail every visitor's handshake instead.

describe('checkedTlsOptions: the agent’s own certificate and key', () => {
  let dir: string;
  const pair = (name: string): { cert: string; key: string } => {
    const [cert, key] = [join(dir, `${name}.crt`), join(dir, `${name}.key`)];
    execFileSync(
      'openssl',
      [
        ...['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'],
        ...['-keyout', key, '-out', cert, '-days', '2', '-subj', `/CN=${name}.localhost`],
      ],
      { stdio: 'ignore' },
    );
    return { cert: readFileSync(cert, 'utf8'), key: readFileSync(key, 'utf8') };
  };
  let one: { cert: string; key: string };
  let two: { cert: string; key: string };
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'svc-forward-tls-'));
    one = pair('one');
    two = pair('two');
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const refused = (tlsCert: string, tlsKey: string, message: RegExp | string): void => {
    assert.throws(
      () => checkedTlsOptions({ tlsCert, tlsKey }),
      (error: Error & { code?: string }) => {
        assert.equal(error.code, 'NAME_INVALID');
        if (typeof message === 'string') assert.equal(error.message, message);
        else assert.match(error.message, message);
        return true;
      },
    );
  };

  it('loads a matching pair, and nothing when neither is given', () => {
    assert.ok(checkedTlsOptions({ tlsCert: one.cert, tlsKey: one.key }));
    assert.equal(checkedTlsOptions({}), undefined);
  });

  it('refuses empty files, saying which', () => {
    refused('', '', 'the TLS certificate (tlsCert, --tls-cert) is empty');
    refused(one.cert, '\n', 'the TLS key (tlsKey, --tls-key) is empty');
  });

  it('refuses a certificate or key that does not parse', () => {
    refused(one.key, one.key, /^the TLS certificate \(tlsCert, --tls-cert\) is not a PEM certificate \(/);
    refused(one.cert, one.cert, /^the TLS key \(tlsKey, --tls-key\) is not an unencrypted PEM private key \(/);
  });

  it('refuses a key that is not the certificate’s, naming the certificate', () => {
    refused(
      one.cert,
      two.key,
      'the TLS key (tlsKey, --tls-key) is not the key of the TLS certificate (tlsCert, --tls-cert), whose subject is CN=one.localhost',
    );
  });
});
