import v8 from 'node:v8';

/**
 * Turns off V8's allocation-site pretenuring for this process. main.ts imports this module
 * first, so it runs before any other module is evaluated.
 *
 * Why: with it on, the edge under steady load is bistable. Usually its young-generation
 * collections free nearly everything (each request's objects die within milliseconds) and
 * take ~0.6 ms. But after a burst in which many objects of some allocation site survived
 * (a batch of inspector records, a warm-up), V8 starts allocating that site's objects straight
 * into the old generation and keeps doing so: `--trace-gc` then shows ~2.7 MB promoted per
 * scavenge, scavenges of 4–8 ms every ~50 ms and a mark-compact every ~1.3 s. Measured on the
 * benchmark's small GET (wrk, 50 connections): GC pauses of 7.5–9 µs per request instead of
 * 1.4–1.8, edge CPU 50–60 µs per request instead of 36–43, p99 12–14 ms (once 650 ms)
 * instead of 6. It happened in about half of the runs (4 of 8); with the flag set here, in 0 of 5,
 * and with it on the command line in 0 of 7. Set later (in start(), after the modules had been
 * evaluated) it still happened once in 4 runs, hence this module's place as main.ts's first import.
 * The cost of going without: objects that really are long-lived are copied once more
 * before promotion, which on a proxy (whose long-lived state is made once per session, not
 * per request) is noise.
 */
v8.setFlagsFromString('--no-allocation-site-pretenuring');
