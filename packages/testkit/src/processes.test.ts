import assert from 'node:assert/strict';
import { test } from 'node:test';
import { spawnNode } from './processes.js';

const PRINT_AND_WAIT = "console.log('ready'); setInterval(() => {}, 1000);";

test('waitForLine resolves with a line already printed or printed later', async () => {
  const proc = spawnNode('-e', [PRINT_AND_WAIT], { label: 'printer' });
  try {
    assert.equal((await proc.waitForLine(/^rea(dy)$/))[1], 'dy');
    assert.equal((await proc.waitForLine(/^ready$/))[0], 'ready');
  } finally {
    await proc.stop('SIGKILL');
  }
});

test('waitForLine gives up after its timeout, naming the pattern and showing what was printed', async () => {
  const proc = spawnNode('-e', [PRINT_AND_WAIT], { label: 'printer' });
  try {
    await proc.waitForLine(/^ready$/);
    await assert.rejects(proc.waitForLine(/^never$/, 50), (error: Error) => {
      assert.equal(error.message, 'printer printed no line matching /^never$/ in 50 ms:\nready');
      return true;
    });
  } finally {
    await proc.stop('SIGKILL');
  }
});

test('waitForLine rejects when the process exits first', async () => {
  const proc = spawnNode('-e', ["console.log('bye')"], { label: 'quitter' });
  await assert.rejects(proc.waitForLine(/^never$/), /quitter exited/);
});
