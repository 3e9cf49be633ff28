export { hasDnsLabels, isDnsLabel, isValidHostname, MAX_HOSTNAME_LENGTH, normalizeHostname } from './hostname.js';
