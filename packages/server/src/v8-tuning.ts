import v8 from 'node:v8';

/**
 * V8 settings for this process, made before any other module runs: main.ts imports this module
 * first. Both are about garbage collection under a proxy's load, where each request allocates a
 * few kilobytes that die within milliseconds.
 *
 * 1. Allocation-site pretenuring off. With it on, the edge under steady load is bistable.
 * Usually its young-generation collections free nearly everything and take ~0.6 ms. But after
 * a burst in which many objects of some allocation site survived (a batch of inspector records,
 * a warm-up), V8 starts allocating that site's objects straight into the old generation and
 * keeps doing so: `--trace-gc` then shows ~2.7 MB promoted per
 * scavenge, scavenges of 4–8 ms every ~50 ms and a mark-compact every ~1.3 s. Measured on the
 * benchmark's small GET (wrk, 50 connections): GC pauses of 7.5–9 µs per request instead of
 * 1.4–1.8, edge CPU 50–60 µs per request instead of 36–43, p99 12–14 ms (once 650 ms)
 * instead of 6. It happened in about half of the runs (4 of 8); with the flag set here, in 0 of 5,
 * and with it on the command line in 0 of 7. Set later (in start(), after the modules had been
 * evaluated) it still happened once in 4 runs, hence this module's place as main.ts's first import.
 * The cost of going without: objects that really are long-lived are copied once more
 * before promotion, which on a proxy (whose long-lived state is made once per session, not
 * per request) is noise.
 *
 * 2. Young-generation collections on the main thread alone (`--no-parallel-scavenge`; the
 * concurrent marking of the old generation is unchanged). A scavenge here copies only the few
 * objects of the requests in flight, so V8's helper threads have little to share, and starting
 * and joining them costs more CPU than it saves in pause time. `perf sched` over the benchmark's
 * small GET put the agent's four helper threads at ~2.9 µs per request (the edge's at ~0.5),
 * almost all parallel scavenging; with the flag the agent's helpers dropped to about a third and
 * its main thread did not grow. Alternating runs of builds with and without it (six pairs):
 * edge + agent 39.6 → 38.8 µs per request, req/s +2%. Pauses got shorter too, because on busy
 * cores the main thread waited for helpers that could not run: median scavenge 0.83 → 0.34 ms
 * on the edge and 0.63 → 0.29 ms on the agent (`--trace-gc`, 5 s of small GET). On a machine
 * with idle cores helpers would shorten a pause a little, for more CPU in all; a proxy whose
 * scavenges take a third of a millisecond does not need that. The agent sets the same flag.
 */
v8.setFlagsFromString('--no-allocation-site-pretenuring');
v8.setFlagsFromString('--no-parallel-scavenge');
