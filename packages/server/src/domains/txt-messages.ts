// User-facing sentences of TXT verification. Every failure ends with the
// propagation note: re-adding the domain would change the value to
// publish, which is the opposite of what a user waiting on DNS needs.

/** Why a TXT verification failed. */
export type TxtFailureCode =
  'txt_not_found' | 'txt_doubled_suffix' | 'txt_whitespace' | 'txt_truncated' | 'txt_wrong_value' | 'dns_timeout' | 'dns_error';

/** Appended to every failure message. */
export const PROPAGATION_NOTE =
  'DNS changes take from a minute to a few hours to become visible, depending on the TTL: verify again later, and do not re-add the domain (that would change the value to publish).';

const MAX_SHOWN = 100;

/** A found value as shown to the user: quoted, escaped, shortened. */
export function shown(value: string): string {
  return JSON.stringify(value.length > MAX_SHOWN ? `${value.slice(0, MAX_SHOWN)}…` : value);
}

/** Inputs every failure sentence can draw on. */
export interface TxtMessageContext {
  /** `_svcrouter.<host>` */
  name: string;
  expected: string;
  /** Values found at `name` (joined chunks), for wrong-value and cut-off messages. */
  found?: readonly string[];
  /** The zone the DNS provider appended a second time (doubled suffix). */
  zone?: string;
  /** The resolver's error code (dns_error). */
  errorCode?: string;
}

const SENTENCES: Record<TxtFailureCode, (c: TxtMessageContext) => string> = {
  txt_not_found: (c) => `No TXT record was found at ${c.name}. Add a TXT record named ${c.name} with the value ${c.expected}.`,
  txt_doubled_suffix: (c) =>
    `The TXT record was found at ${c.name}.${c.zone ?? ''}: your DNS provider adds the zone ${c.zone ?? ''} to record names itself. Enter the record name without ".${c.zone ?? ''}" so that it becomes ${c.name}.`,
  txt_whitespace: (c) =>
    `The TXT record at ${c.name} has extra whitespace around its value. Remove it so the value is exactly ${c.expected}.`,
  txt_truncated: (c) =>
    `The TXT record at ${c.name} is cut off: found ${shown(c.found?.[0] ?? '')}, expected ${c.expected}. Paste the whole value.`,
  txt_wrong_value: (c) =>
    `The TXT record at ${c.name} has a different value (found ${(c.found ?? []).slice(0, 3).map(shown).join(', ')}); expected ${c.expected}.`,
  dns_timeout: (c) => `The DNS lookup of ${c.name} timed out. Try again in a few minutes.`,
  dns_error: (c) => `The DNS lookup of ${c.name} failed (${c.errorCode ?? 'error'}). Try again in a few minutes.`,
};

/** The full user-facing message for a failure: the specific sentence, then the propagation note. */
export function txtFailureMessage(code: TxtFailureCode, context: TxtMessageContext): string {
  return `${SENTENCES[code](context)} ${PROPAGATION_NOTE}`;
}
