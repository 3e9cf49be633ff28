import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PendingBytes } from './pending-bytes.js';

describe('PendingBytes', () => {
  it('gives back what was appended as UTF-8, in order, then is empty', () => {
    const pending = new PendingBytes();
    assert.ok(pending.empty);
    assert.equal(pending.take(), undefined);
    const texts = ['event: a\n', 'é/𝄞/\u2028', '\ud800 lone', 'x'.repeat(10)];
    for (const text of texts) pending.append(text);
    assert.ok(!pending.empty);
    assert.deepEqual(pending.take(), Buffer.from(texts.join(''), 'utf8'));
    assert.ok(pending.empty);
    assert.equal(pending.take(), undefined);
  });

  it('spans chunks when more than one chunk is appended, and sizes the next chunk from the last take', () => {
    const pending = new PendingBytes();
    const texts = Array.from({ length: 500 }, (_, i) => `event: request\nid: ${i}\ndata: ${'€'.repeat(i % 90)}\n\n`);
    for (const round of [1, 2]) {
      for (const text of texts) pending.append(text);
      assert.equal(pending.take()!.toString('utf8'), texts.join(''), `round ${round}`);
    }
  });

  it('forgets what it held on clear()', () => {
    const pending = new PendingBytes();
    pending.append('kept nowhere');
    pending.clear();
    assert.ok(pending.empty);
    pending.append('b');
    assert.equal(pending.take()!.toString(), 'b');
  });
});
