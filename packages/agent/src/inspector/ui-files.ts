import { readFile } from 'node:fs/promises';
import { getAsset, isSea } from 'node:sea';

/** The web UI's files, served as they are (no build step): the folder beside dist/ in the package. */
const UI_DIR = '../../inspector-ui/';

/**
 * One file of the web UI. The single executable carries them as assets under their file names
 * (scripts/build-agent-binary.mjs), since nothing lies beside it; the npm package reads them
 * from its inspector-ui folder. Only that branch uses import.meta, which the executable's
 * CommonJS bundle leaves empty.
 */
export async function readUiFile(name: string): Promise<Buffer> {
  if (isSea()) return Buffer.from(getAsset(name));
  return readFile(new URL(name, new URL(UI_DIR, import.meta.url)));
}
