import { readFileSync } from 'node:fs';
import { caFileFailure, type Failure } from './failure.js';

/** Reads SVC_CA_FILE; a missing, unreadable or non-PEM file is a failure to explain, not a crash. */
export function readCaFile(path: string): string | Failure {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    return caFileFailure(path, error as NodeJS.ErrnoException);
  }
  return text.includes('-----BEGIN CERTIFICATE-----') ? text : caFileFailure(path, undefined);
}
