import assert from 'node:assert/strict';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { prng } from './test-support.js';
import { SEED_INPUTS, decodeTarget, mutate, sessionTarget, signature } from './wire-fuzz-test-support.js';

// The wire protocol under mutated input: the kept corpus is replayed on every run, then a
// seeded mutation run. SVC_FUZZ_ITERATIONS sets its length (a long run: 100000),
// SVC_FUZZ_SEED its seed, and SVC_FUZZ_SAVE=1 keeps inputs with a new outcome in the corpus.

const CORPUS_DIR = fileURLToPath(new URL('./fuzz-corpus/', import.meta.url));
const ITERATIONS = Number(process.env.SVC_FUZZ_ITERATIONS ?? 400);
const SEED = Number(process.env.SVC_FUZZ_SEED ?? 22);

/** Replies are bounded by the input: each frame read earns a few small frames back at most. */
const REPLY_BYTES_PER_INPUT_BYTE = 4;
const REPLY_SLACK_BYTES = 1024;

async function corpus(): Promise<Array<[string, Buffer]>> {
  const names = (await readdir(CORPUS_DIR)).filter((name) => name.endsWith('.hex')).sort();
  return Promise.all(
    names.map(async (name) => [name, Buffer.from((await readFile(CORPUS_DIR + name, 'utf8')).trim(), 'hex')] as [string, Buffer]),
  );
}

/** Frames the decoder read whole, over every input checked: the size of a run, printed at its end. */
let framesDecoded = 0;

async function check(input: Buffer, seed: number, label: string): Promise<string> {
  const decoded = decodeTarget(input, seed);
  framesDecoded += decoded.frames.length;
  const session = await sessionTarget(input, seed);
  const bound = input.length * REPLY_BYTES_PER_INPUT_BYTE + REPLY_SLACK_BYTES;
  assert.ok(session.replyBytes <= bound, `${label}: ${session.replyBytes} reply bytes for ${input.length} input bytes`);
  assert.ok(session.streamsOpened <= input.length / 10, `${label}: ${session.streamsOpened} streams from ${input.length} bytes`);
  return signature(decoded, session);
}

describe('wire protocol fuzzing', () => {
  test('every input of the corpus is handled without an exception escaping', async () => {
    const inputs = await corpus();
    assert.ok(inputs.length >= 10, `corpus at ${CORPUS_DIR} holds ${inputs.length} inputs`);
    for (const [name, input] of inputs) await check(input, input.length, name);
  });

  test(`${ITERATIONS} seeded mutations (seed ${SEED}) neither throw nor grow replies beyond the input`, async (t) => {
    framesDecoded = 0;
    const random = prng(SEED);
    const pool: Buffer[] = [...SEED_INPUTS, ...(await corpus()).map(([, input]) => input)];
    const seen = new Set<string>();
    const found: Buffer[] = [];
    for (const input of pool) seen.add(await check(input, input.length, 'pool'));
    for (let i = 0; i < ITERATIONS; i++) {
      const parent = pool[Math.floor(random() * pool.length)]!;
      const input = mutate(parent, random, pool);
      const seed = Math.floor(random() * 2 ** 31);
      let outcome: string;
      try {
        outcome = await check(input, seed, `iteration ${i}`);
      } catch (error) {
        // The input that broke it, ready to be added to the corpus as a regression.
        throw new Error(`iteration ${i} (seed ${SEED}), input ${input.toString('hex')}: ${(error as Error).stack}`);
      }
      if (!seen.has(outcome)) {
        seen.add(outcome);
        pool.push(input);
        found.push(input);
      }
    }
    if (process.env.SVC_FUZZ_SAVE === '1') {
      for (const input of found) await writeFile(`${CORPUS_DIR}${SEED}-${found.indexOf(input)}.hex`, `${input.toString('hex')}\n`);
    }
    t.diagnostic(`${ITERATIONS} mutated inputs, ${framesDecoded} frames decoded, ${seen.size} distinct outcomes`);
    assert.ok(seen.size > SEED_INPUTS.length, 'mutations reach outcomes the seeds do not');
  });
});
