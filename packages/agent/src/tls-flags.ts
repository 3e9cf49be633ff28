import { readFileSync } from 'node:fs';
import path from 'node:path';

/** What makes a TCP tunnel's flags a TLS passthrough tunnel's (`svc tls`, `proto: tls`). */
export interface TlsFlags {
  subdomain?: string;
  domain?: string;
  /** `--tls-cert`: the agent terminates TLS with this certificate chain (a PEM file). */
  certFile?: string;
  /** `--tls-key`: the key of `certFile` (a PEM file). */
  keyFile?: string;
  /** The PEM contents of `certFile` and `keyFile`, once read (readTlsPair). */
  tlsCert?: string;
  tlsKey?: string;
}

/** `--tls-cert` and `--tls-key` come together; the problem sentence, or undefined. */
export function tlsPairProblem(flags: TlsFlags): string | undefined {
  if ((flags.certFile === undefined) === (flags.keyFile === undefined)) return undefined;
  return flags.certFile === undefined ? '--tls-key needs --tls-cert' : '--tls-cert needs --tls-key';
}

/** Reads the agent's own certificate and key into `flags` (relative paths from `base`); an error sentence when a file cannot be read. */
export function readTlsPair(flags: TlsFlags, base = '.'): TlsFlags | string {
  if (flags.certFile === undefined || flags.keyFile === undefined) return flags;
  const read = (file: string, what: string): string | { problem: string } => {
    try {
      return readFileSync(path.resolve(base, file), 'utf8');
    } catch (error) {
      return { problem: `cannot read the TLS ${what} ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}` };
    }
  };
  const cert = read(flags.certFile, 'certificate');
  if (typeof cert !== 'string') return cert.problem;
  const key = read(flags.keyFile, 'key');
  if (typeof key !== 'string') return key.problem;
  return { ...flags, tlsCert: cert, tlsKey: key };
}
