import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { LOG_REDACTION } from './log-redaction.js';

describe('log redaction', () => {
  it('replaces tokens, cookies, CSRF tokens and passwords, and keeps everything else', () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString('utf8'));
        done();
      },
    });
    const log = pino({ redact: LOG_REDACTION }, sink);
    const secrets = [
      'svc_agent_secret',
      'svs_session_secret',
      'csrf_secret',
      'password_secret',
      'old_secret',
      'new_secret',
      'svl_link_secret',
    ];
    log.info(
      {
        headers: {
          authorization: 'Bearer svc_agent_secret',
          cookie: 'svc_session=svs_session_secret',
          'set-cookie': 'svc_session=svs_session_secret',
          'x-csrf-token': 'csrf_secret',
        },
        body: { password: 'password_secret', currentPassword: 'old_secret', newPassword: 'new_secret', token: 'svl_link_secret' },
        csrfToken: 'csrf_secret',
        accountId: 'acc_visible',
      },
      'event',
    );
    const line = lines.join('');
    for (const secret of secrets) assert.ok(!line.includes(secret), `${secret} leaked: ${line}`);
    assert.match(line, /acc_visible/);
    assert.match(line, /\[redacted\]/);
  });
});
