/** Version of the svcRouter packages, reported by `svc version` and the edge. */
export const SVC_VERSION = '0.1.0';
