import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { generateToken, hashToken, isWellFormedToken, parseBearer } from './tokens.js';

const VALID = `svc_${'A'.repeat(20)}-_${'z9'.repeat(10)}a`;

describe('generateToken', () => {
  it('returns svc_ + 43 base64url chars, its 12-char prefix and its sha256 hash', () => {
    const { token, prefix, hash } = generateToken();
    assert.match(token, /^svc_[A-Za-z0-9_-]{43}$/);
    assert.equal(prefix, token.slice(0, 12));
    assert.equal(hash, hashToken(token));
  });

  it('returns a different token each call', () => {
    assert.notEqual(generateToken().token, generateToken().token);
  });
});

describe('hashToken', () => {
  it('is lower-case sha256 hex', () => {
    assert.equal(hashToken('abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });
});

describe('isWellFormedToken', () => {
  it('accepts the exact shape', () => {
    assert.equal(VALID.length, 47);
    assert.equal(isWellFormedToken(VALID), true);
    assert.equal(isWellFormedToken(generateToken().token), true);
  });

  for (const [why, value] of [
    ['double quotes', `"${VALID}"`],
    ['single quotes', `'${VALID}'`],
    ['leading space', ` ${VALID}`],
    ['trailing space', `${VALID} `],
    ['trailing newline', `${VALID}\n`],
    ['wrong prefix', VALID.replace('svc_', 'svx_')],
    ['upper-case prefix', VALID.replace('svc_', 'SVC_')],
    ['one char short', VALID.slice(0, -1)],
    ['one char long', `${VALID}a`],
    ['standard base64 chars', `svc_${'+/'.repeat(21)}A`],
    ['empty', ''],
  ] as const) {
    it(`rejects a token with ${why}`, () => {
      assert.equal(isWellFormedToken(value), false);
    });
  }
});

describe('parseBearer', () => {
  it('returns the token of "Bearer <token>", scheme in any case', () => {
    assert.equal(parseBearer(`Bearer ${VALID}`), VALID);
    assert.equal(parseBearer(`bearer ${VALID}`), VALID);
    assert.equal(parseBearer(`BEARER ${VALID}`), VALID);
  });

  it('does not trim the token, so padding reaches the shape check', () => {
    assert.equal(parseBearer(`Bearer  ${VALID}`), ` ${VALID}`);
    assert.equal(parseBearer(`Bearer ${VALID} `), `${VALID} `);
    assert.equal(parseBearer(`Bearer "${VALID}"`), `"${VALID}"`);
  });

  it('returns undefined for a missing header or another shape', () => {
    assert.equal(parseBearer(undefined), undefined);
    assert.equal(parseBearer(''), undefined);
    assert.equal(parseBearer('Bearer'), undefined);
    assert.equal(parseBearer('Bearer '), undefined);
    assert.equal(parseBearer(VALID), undefined);
    assert.equal(parseBearer(`Basic ${VALID}`), undefined);
    assert.equal(parseBearer(`Bearer\t${VALID}`), undefined);
    assert.equal(parseBearer(`BearerX ${VALID}`), undefined);
  });
});
