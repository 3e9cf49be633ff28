import v8 from 'node:v8';

/**
 * V8 settings, made before any other module runs (main.ts imports this module first; set any
 * later, the pretenuring problem still appeared). Each proxied request allocates a few kilobytes
 * that die within milliseconds. Allocation-site pretenuring made the edge bistable, at times
 * moving those objects straight into the old generation for good; parallel scavenging starts
 * helper threads that cost more CPU than they save when every core is busy. Measurements:
 * docs/performance.md#garbage-collection-and-v8-settings.
 */
v8.setFlagsFromString('--no-allocation-site-pretenuring');
v8.setFlagsFromString('--no-parallel-scavenge');
/**
 * The old generation may grow to three times what the last full collection kept. V8 picks the
 * factor from its own speeds, and after sustained load it picked about twice a small heap: a
 * transfer then ran a full collection every few tens of milliseconds, doubling the CPU of every
 * byte moved (docs/performance.md, "Transfers after sustained load"). Read at every collection,
 * so it takes effect when set here.
 */
v8.setFlagsFromString('--heap-growing-percent=200');
