import { lookupWithDeadline, type LookupResult } from './dns-resolver.js';
import { txtFailureMessage, type TxtFailureCode } from './txt-messages.js';
import { txtRecordName } from './txt-record.js';

/** The part of `dns.promises.Resolver` TXT verification uses. */
export interface TxtResolver {
  resolveTxt(hostname: string): Promise<string[][]>;
}

/** What verifyTxt needs. */
export interface VerifyTxtOptions {
  /** The domain's host, normalised (domains/host.ts). */
  host: string;
  /** The domain's txtValue. */
  expected: string;
  /** A resolver on SVC_DNS_SERVERS; a fresh one per call (createDnsResolver). */
  resolver: TxtResolver;
  /** Overall deadline for every query of this verification. */
  timeoutMs: number;
}

/** Verified, or why not, with a sentence for the user. */
export type TxtCheck = { ok: true } | { ok: false; code: TxtFailureCode; message: string };

/**
 * Checks that `_svcrouter.<host>` publishes `expected`. Each record's 255-byte
 * chunks are joined; a value wrapped in one pair of double quotes is accepted
 * (DNS UIs add them); any one of several records may match; everything else
 * must match exactly. A failure says precisely what is wrong: nothing there
 * (and whether the record sits at `_svcrouter.<host>.<zone>` instead), extra
 * whitespace, a cut-off value, another value, or DNS trouble.
 */
export async function verifyTxt(options: VerifyTxtOptions): Promise<TxtCheck> {
  const { host, expected, resolver } = options;
  const name = txtRecordName(host);
  const deadline = Date.now() + options.timeoutMs;
  const lookup = (n: string): Promise<LookupResult<string>> =>
    lookupWithDeadline(async () => (await resolver.resolveTxt(n)).map((chunks) => chunks.join('')), deadline);
  const fail = (code: TxtFailureCode, extra: { found?: string[]; zone?: string; errorCode?: string } = {}): TxtCheck => ({
    ok: false,
    code,
    message: txtFailureMessage(code, { name, expected, ...extra }),
  });

  const result = await lookup(name);
  if (result.kind === 'timeout') return fail('dns_timeout');
  if (result.kind === 'error') return fail('dns_error', { errorCode: result.code });
  if (result.kind === 'found') {
    const verdict = classify(result.records, expected);
    return verdict.code === 'ok' ? { ok: true } : fail(verdict.code, { found: verdict.found });
  }
  const zone = await findDoubledZone(host, expected, lookup);
  return zone === undefined ? fail('txt_not_found') : fail('txt_doubled_suffix', { zone });
}

type Verdict = { code: 'ok' } | { code: 'txt_whitespace' | 'txt_truncated' | 'txt_wrong_value'; found: string[] };

/** Strips one pair of surrounding double quotes, as a DNS UI may have added. */
function unquote(value: string): string {
  return value.length >= 2 && value.startsWith('"') && value.endsWith('"') ? value.slice(1, -1) : value;
}

/** Whitespace and quotes removed in any order, and a lone opening quote a cut-off value kept. */
function loosened(value: string): string {
  const inner = unquote(value.trim()).trim();
  return inner.startsWith('"') && !inner.endsWith('"') ? inner.slice(1) : inner;
}

function classify(values: string[], expected: string): Verdict {
  if (values.some((v) => unquote(v) === expected)) return { code: 'ok' };
  const whitespace = values.find((v) => loosened(v) === expected);
  if (whitespace !== undefined) return { code: 'txt_whitespace', found: [whitespace] };
  const cut = values.find((v) => {
    const l = loosened(v);
    return l.length > 0 && l.length < expected.length && expected.startsWith(l);
  });
  if (cut !== undefined) return { code: 'txt_truncated', found: [cut] };
  return { code: 'txt_wrong_value', found: values };
}

/**
 * When nothing is at `_svcrouter.<host>`, looks for the record a provider that
 * appends the zone itself would have created: `_svcrouter.<host>.<zone>`, where
 * the zone is the host or one of its parents. Returns that zone, or undefined.
 */
async function findDoubledZone(
  host: string,
  expected: string,
  lookup: (name: string) => Promise<LookupResult<string>>,
): Promise<string | undefined> {
  const labels = host.split('.');
  const zones: string[] = [];
  for (let i = 0; i + 2 <= labels.length; i++) zones.push(labels.slice(i).join('.'));
  const results = await Promise.all(zones.map((zone) => lookup(`${txtRecordName(host)}.${zone}`)));
  // Any plausible copy of our value counts: the user then learns about the name
  // first, and a second verify reports a value problem, if any.
  const index = results.findIndex((r) => r.kind === 'found' && r.records.some((v) => isPlausibleCopy(v, expected)));
  return index === -1 ? undefined : zones[index];
}

function isPlausibleCopy(value: string, expected: string): boolean {
  const l = loosened(value);
  return l.length > 0 && expected.startsWith(l);
}
