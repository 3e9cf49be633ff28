export { Inspector, type CapturedRequest, type HostOwner, type InspectorOptions, type InspectorStats } from './inspector.js';
export { RequestHub, type RequestListener } from './request-hub.js';
