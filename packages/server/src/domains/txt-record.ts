import { randomBytes } from 'node:crypto';

/** Label under which the verification record lives: `_svcrouter.<host>`. */
export const TXT_RECORD_LABEL = '_svcrouter';
/** Every verification value starts with this, so a stray TXT record is never mistaken for one. */
export const TXT_VALUE_PREFIX = 'svc-verify-';
// 20 random bytes = 160 bits: unguessable, and 40 hex characters stay well
// inside one 255-byte TXT string, so no provider needs to split it.
const TXT_VALUE_BYTES = 20;

/** The DNS name the user publishes the TXT record at. */
export function txtRecordName(host: string): string {
  return `${TXT_RECORD_LABEL}.${host}`;
}

/** A fresh verification value such as `svc-verify-3f2a…` (40 hex characters). */
export function newTxtValue(): string {
  return `${TXT_VALUE_PREFIX}${randomBytes(TXT_VALUE_BYTES).toString('hex')}`;
}
