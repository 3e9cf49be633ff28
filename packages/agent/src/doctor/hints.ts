/** The checks of `svc doctor`, in the order they run and print. */
export const CHECK_NAMES = [
  'server',
  'token',
  'clock',
  'tunnel',
  'tls',
  'http1',
  'http2',
  'websocket',
  'sse',
  'upload',
  'download',
  'offline',
] as const;
export type CheckName = (typeof CHECK_NAMES)[number];

/** What to do when a check fails, by check; a failure may bring a more precise one. */
export const HINTS: Readonly<Record<CheckName, string>> = {
  server:
    'check SVC_SERVER (the edge URL, default http://localhost:8080) and that svc-server is running and reachable from here; a firewall or proxy may be in the way',
  token:
    'set SVC_TOKEN to an agent token (svc_…) exactly as it was printed: from the first start of svc-server, `svc-server account create`, or POST /v1/keys',
  clock:
    "set this machine's clock right (enable NTP: `timedatectl set-ntp true`, or the system's time settings); certificates and sign-in links are checked against it",
  tunnel: 'the edge refused the temporary tunnel; the sentence above says why',
  tls: "the edge's certificate is not trusted here: set SVC_CA_FILE to the server's CA (svc-data/dev-ca/ca.crt on a server with a dev certificate), or give the server a publicly trusted certificate (SVC_TLS_CERT/SVC_TLS_KEY)",
  http1:
    'the public URL did not reach the built-in service: something between here and the edge (a proxy, a captive portal, DNS pointing elsewhere) answers for the tunnel hostnames',
  http2:
    'HTTP/2 through the public URL failed while HTTP/1.1 may work: a proxy or load balancer in front of the edge does not pass HTTP/2 (ALPN h2); run it in TCP mode or let it speak HTTP/2',
  websocket:
    'something between here and the edge refuses WebSocket upgrades: let the proxy or load balancer in front of the edge pass the Upgrade and Connection headers (or run it in TCP mode)',
  sse: 'the first event did not arrive promptly: something between here and the edge buffers responses (turn buffering off, e.g. nginx `proxy_buffering off`)',
  upload:
    'the upload did not arrive intact: a proxy in front of the edge may cap or rewrite request bodies (e.g. nginx client_max_body_size), or the account may have reached its transfer quota (GET /v1/usage)',
  download:
    'the download did not arrive intact: a proxy in front of the edge may cap or rewrite responses, or the account may have reached its transfer quota (GET /v1/usage)',
  offline:
    'the hostname still answered after its tunnel closed: something in front of the edge caches responses for tunnel hostnames; turn that cache off',
};
