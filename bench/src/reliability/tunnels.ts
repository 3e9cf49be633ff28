/**
 * 1,000 tunnels on one agent: `node --expose-gc bench/dist/reliability/tunnels.js [--tunnels=1000]`.
 * One SDK process binds N tunnels on one session (forwardMany); prints the bind time, the RSS of
 * the edge and of the agent process with them bound, and how many answered one GET each.
 */
import { startSystem } from '../system.js';
import { manyTunnels } from '../w-tunnels.js';
import { checkArgs, conditions, flag, MIB } from './common.js';

checkArgs(
  `Usage: node --expose-gc bench/dist/reliability/tunnels.js [--tunnels=1000]
  --tunnels  tunnels bound on one agent session (default 1000)`,
  ['tunnels'],
);

const tunnels = flag('tunnels', 1000);
console.log(`machine: ${conditions()}`);
const system = await startSystem();
try {
  const rssBefore = (await system.edgeMemory()).rss;
  const result = await manyTunnels(system, { tunnels, bindSamples: 10 } as Parameters<typeof manyTunnels>[1], (line) => console.log(line));
  const rssAfter = (await system.edgeMemory()).rss;
  console.log(
    `tunnels: ${result.count} on one session, bound in ${result.bindAllS.toFixed(2)} s (${result.bindEachMs.toFixed(2)} ms each)`,
  );
  console.log(`answered 200: ${result.responding}/${result.count} (one GET each, 50 at a time, ${result.checkS.toFixed(2)} s)`);
  console.log(
    `edge RSS: ${(rssBefore / MIB).toFixed(1)} MiB before, ${(rssAfter / MIB).toFixed(1)} MiB with them bound; per idle tunnel ${(result.edgeRssBytesPerTunnel / 1024).toFixed(1)} KiB RSS, ${(result.edgeBytesPerTunnel / 1024).toFixed(1)} KiB heap`,
  );
  console.log(
    `agent per idle tunnel: ${(result.agentRssBytesPerTunnel / 1024).toFixed(1)} KiB RSS, ${(result.agentBytesPerTunnel / 1024).toFixed(1)} KiB heap`,
  );
  console.log(
    `bind latency of one more tunnel: median ${result.bindLatencyMs.toFixed(1)} ms, first 200 at ${result.firstResponseMs.toFixed(1)} ms`,
  );
} finally {
  await system.close();
}
