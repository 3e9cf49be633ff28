// @peculiar/x509 v2 resolves its algorithms through tsyringe, which needs a Reflect
// metadata polyfill loaded before the library's first line runs. Importing the library
// only through this module guarantees that order. ESM evaluates imports in order.
import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';

// The library falls back to this provider wherever a call takes no explicit crypto.
// Setting it is idempotent, so other modules (ACME later) may set the same value.
x509.cryptoProvider.set(webcrypto);

/** @peculiar/x509, loaded after its Reflect polyfill and bound to Node's WebCrypto. */
export { x509 };
