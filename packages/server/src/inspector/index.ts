// The Traffic Inspector's write path: captured requests queued and written to the store in batches
// off the request path, retention, and the live feed the API streams.
// May use: hostname, store, auth, metrics.
export { Inspector, type CapturedRequest, type HostOwner, type InspectorOptions, type InspectorStats } from './inspector.js';
export { RequestHub, type RequestListener } from './request-hub.js';
