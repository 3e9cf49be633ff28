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
