import v8 from 'node:v8';

/**
 * Young-generation collections on the main thread alone, as on the edge (why, and what it
 * measured: docs/performance.md#garbage-collection-and-v8-settings). main.ts imports this module
 * first, so the setting is made before any other module runs. Only the `svc` command sets it:
 * the SDK is a library and leaves the V8 settings of the program that embeds it alone.
 */
v8.setFlagsFromString('--no-parallel-scavenge');
/**
 * The old generation may grow to three times what the last full collection kept, as on the edge
 * (server's v8-tuning.ts says why): otherwise a transfer after sustained load ran a full
 * collection every few tens of milliseconds.
 */
v8.setFlagsFromString('--heap-growing-percent=200');
