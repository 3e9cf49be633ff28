/** `node bench/dist/profile-summary.js <file.cpuprofile> [top]`: prints the profile's busiest areas and functions by self time. */
import { profileMarkdown, summarizeProfile } from './cpu-profile.js';

const [file, top = '25'] = process.argv.slice(2);
if (!file) {
  process.stderr.write('usage: node bench/dist/profile-summary.js <file.cpuprofile> [top]\n');
  process.exit(2);
}
process.stdout.write(`${profileMarkdown(file, file, summarizeProfile(file, Number(top)))}\n`);
