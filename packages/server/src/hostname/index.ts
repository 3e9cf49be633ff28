// What a DNS hostname is: validation and normalisation. A leaf every folder may use.
// May use: nothing of the server.
export { hasDnsLabels, isDnsLabel, isValidHostname, MAX_HOSTNAME_LENGTH, normalizeHostname } from './hostname.js';
export { tlsUrl } from './tls-address.js';
