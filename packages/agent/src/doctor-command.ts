import { DEFAULT_SERVER_URL, parseServerUrls } from '@svcrouter/sdk';
import type { Command } from './args.js';
import { readCaFile } from './ca-file.js';
import { checkLines, jsonReport, runDoctor, summaryLine } from './doctor/index.js';
import { explainFailure } from './failure.js';
import type { Output } from './output.js';

/** What `svc doctor` reads of the environment: SVC_TOKEN, SVC_SERVER and SVC_CA_FILE. */
export interface DoctorEnv {
  token: string | undefined;
  server: string | undefined;
  caFile: string | undefined;
}

/**
 * `svc doctor`: the checks one line each as they complete (or, with --json, one object at the
 * end). Exit 0 when every check passed, 1 otherwise. A bad SVC_SERVER or SVC_CA_FILE stops it
 * before any check, as it stops every command; a bad token is the token check's failure.
 */
export async function doctor(command: Extract<Command, { kind: 'doctor' }>, env: DoctorEnv, output: Output): Promise<number> {
  let server: string;
  try {
    server = parseServerUrls(env.server || DEFAULT_SERVER_URL)[0]!;
  } catch (error) {
    output.failure(explainFailure(error));
    return 1;
  }
  const ca = env.caFile ? readCaFile(env.caFile) : undefined;
  if (typeof ca === 'object') {
    output.failure(ca);
    return 1;
  }
  const results = await runDoctor({ server, token: env.token || undefined, ca, transferBytes: command.transferBytes }, (result) => {
    if (!command.json) output.info(checkLines(result));
  });
  output.info(command.json ? jsonReport(server, results) : summaryLine(results));
  return results.every((result) => result.status === 'pass') ? 0 : 1;
}
