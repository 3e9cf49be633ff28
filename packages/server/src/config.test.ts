import assert from 'node:assert/strict';
import { hostname } from 'node:os';
import { describe, it } from 'node:test';
import { DEFAULT_PLANS, loadConfig } from './config.js';

const CWD = '/srv/svc';

describe('loadConfig defaults', () => {
  const config = loadConfig({}, CWD);

  it('fills every documented default', () => {
    assert.deepEqual(config, {
      sharedDomain: 'localhost',
      httpPort: 8080,
      httpsPort: 8443,
      host: '::',
      dataDir: '/srv/svc/svc-data',
      databaseUrl: undefined,
      tlsCert: undefined,
      tlsKey: undefined,
      acmeDirectory: 'https://acme-v02.api.letsencrypt.org/directory',
      acmeEmail: undefined,
      dnsServers: ['1.1.1.1', '8.8.8.8'],
      edgeTarget: undefined,
      plans: {
        free: { tunnels: 10, domains: 2, bandwidthBytes: 53687091200, webhooks: 2, tcpAddresses: 1 },
        pro: { tunnels: 1000, domains: 25, bandwidthBytes: 1099511627776, webhooks: 20, tcpAddresses: 20 },
      },
      publicHttpsPort: undefined,
      heartbeatMs: 5000,
      maxSessions: 20_000,
      maxAccountSessions: 1000,
      trustedProxies: [],
      oidcProviders: [],
      oidcSessionHours: 12,
      oidcKeyActivationSeconds: 60,
      logLevel: 'info',
      nodeId: hostname(),
      inspectorRetentionDays: 3,
      inspectorMaxPerAccount: 100000,
      usageFlushMs: 1000,
      signup: 'open',
      nameGraceMs: 30_000,
      holdMs: 10_000,
      planPollMs: 2_000,
      oidcSignOutStaleSeconds: 30,
      planSweepMs: 60_000,
      drainMs: 30_000,
      unreadyMs: 0,
      tcpPorts: { from: 20000, to: 20999 },
      cluster: undefined,
      webhookAllowPrivate: false,
      webhookRetryMs: [5000, 30000, 120000, 600000, 3600000],
      webhookKey: undefined,
    });
  });

  it('is frozen, nested objects included', () => {
    assert.ok(Object.isFrozen(config));
    assert.ok(Object.isFrozen(config.plans));
    assert.ok(Object.isFrozen(config.plans.free));
    assert.ok(Object.isFrozen(config.dnsServers));
  });

  it('treats empty variables as unset', () => {
    assert.deepEqual(loadConfig({ SVC_HTTP_PORT: '', SVC_DATABASE_URL: '', SVC_PLANS: '' }, CWD), config);
  });
});

describe('SVC_OIDC_PROVIDERS and SVC_OIDC_SESSION_HOURS', () => {
  const provider = { name: 'google', issuer: 'https://accounts.google.com', clientId: 'id', clientSecret: 'secret' };

  it('takes a JSON array of providers and a number of hours', () => {
    const config = loadConfig({ SVC_OIDC_PROVIDERS: JSON.stringify([provider]), SVC_OIDC_SESSION_HOURS: '0.5' }, CWD);
    assert.deepEqual(config.oidcProviders, [provider]);
    assert.equal(config.oidcSessionHours, 0.5);
  });

  it('refuses bad JSON, a missing field, a bad issuer, a name given twice and zero hours, naming the variable', () => {
    const bad = (env: Record<string, string>, message: RegExp) => assert.throws(() => loadConfig(env, CWD), message);
    bad({ SVC_OIDC_PROVIDERS: '{' }, /^Error: invalid SVC_OIDC_PROVIDERS: expected a JSON array/);
    bad(
      { SVC_OIDC_PROVIDERS: JSON.stringify([{ ...provider, clientSecret: undefined }]) },
      /invalid SVC_OIDC_PROVIDERS: .*at 0\.clientSecret/,
    );
    bad({ SVC_OIDC_PROVIDERS: JSON.stringify([{ ...provider, issuer: 'ftp://x' }]) }, /invalid SVC_OIDC_PROVIDERS: .*at 0\.issuer/);
    bad({ SVC_OIDC_PROVIDERS: JSON.stringify([provider, provider]) }, /"google" is given twice/);
    bad({ SVC_OIDC_SESSION_HOURS: '0' }, /invalid SVC_OIDC_SESSION_HOURS: expected a number of hours/);
  });

  it('takes SVC_OIDC_KEY_ACTIVATION_SECONDS from 0 to a day, naming it when bad', () => {
    assert.equal(loadConfig({ SVC_OIDC_KEY_ACTIVATION_SECONDS: '5' }, CWD).oidcKeyActivationSeconds, 5);
    assert.throws(() => loadConfig({ SVC_OIDC_KEY_ACTIVATION_SECONDS: '86401' }, CWD), /invalid SVC_OIDC_KEY_ACTIVATION_SECONDS/);
    assert.throws(() => loadConfig({ SVC_OIDC_KEY_ACTIVATION_SECONDS: 'soon' }, CWD), /invalid SVC_OIDC_KEY_ACTIVATION_SECONDS/);
  });
});

describe('SVC_TRUSTED_PROXIES', () => {
  it('takes comma-separated CIDRs and addresses of both families', () => {
    assert.deepEqual(loadConfig({ SVC_TRUSTED_PROXIES: '10.0.0.0/8, 127.0.0.1,::1' }, CWD).trustedProxies, [
      '10.0.0.0/8',
      '127.0.0.1',
      '::1',
    ]);
  });

  it('refuses anything else, naming the variable', () => {
    assert.throws(
      () => loadConfig({ SVC_TRUSTED_PROXIES: '10.0.0.0/33' }, CWD),
      /invalid SVC_TRUSTED_PROXIES: expected comma-separated CIDRs/,
    );
    assert.throws(() => loadConfig({ SVC_TRUSTED_PROXIES: 'lb.internal' }, CWD), /invalid SVC_TRUSTED_PROXIES/);
  });
});

describe('loadConfig values', () => {
  it('reads every variable', () => {
    const c = loadConfig(
      {
        SVC_SHARED_DOMAIN: 'Tunnels.Example.COM',
        SVC_HTTP_PORT: '0',
        SVC_HTTPS_PORT: '0',
        SVC_BIND_HOST: '127.0.0.1',
        SVC_DATA_DIR: 'data',
        SVC_DATABASE_URL: 'postgresql://svc:secret@127.0.0.1:5432/svc',
        SVC_TLS_CERT: 'tls/cert.pem',
        SVC_TLS_KEY: '/etc/tls/key.pem',
        SVC_ACME_DIRECTORY: 'https://127.0.0.1:14000/dir',
        SVC_ACME_EMAIL: 'ops@example.com',
        SVC_DNS_SERVERS: '127.0.0.1:5353, [::1]:5353,9.9.9.9',
        SVC_PUBLIC_HTTPS_PORT: '443',
        SVC_HEARTBEAT_MS: '50',
        SVC_MAX_SESSIONS: '5000',
        SVC_MAX_ACCOUNT_SESSIONS: '20',
        SVC_LOG_LEVEL: 'debug',
        SVC_NODE_ID: 'edge-1',
        SVC_INSPECTOR_RETENTION_DAYS: '7',
        SVC_INSPECTOR_MAX_PER_ACCOUNT: '500',
        SVC_USAGE_FLUSH_MS: '250',
        SVC_SIGNUP: 'closed',
      },
      CWD,
    );
    assert.equal(c.sharedDomain, 'tunnels.example.com');
    assert.equal(c.httpPort, 0);
    assert.equal(c.httpsPort, 0);
    assert.equal(c.host, '127.0.0.1');
    assert.equal(c.dataDir, '/srv/svc/data');
    assert.equal(c.databaseUrl, 'postgresql://svc:secret@127.0.0.1:5432/svc');
    assert.equal(c.tlsCert, '/srv/svc/tls/cert.pem');
    assert.equal(c.tlsKey, '/etc/tls/key.pem');
    assert.equal(c.acmeDirectory, 'https://127.0.0.1:14000/dir');
    assert.equal(c.acmeEmail, 'ops@example.com');
    assert.deepEqual(c.dnsServers, ['127.0.0.1:5353', '[::1]:5353', '9.9.9.9']);
    assert.equal(c.publicHttpsPort, 443);
    assert.equal(c.heartbeatMs, 50);
    assert.equal(c.maxSessions, 5000);
    assert.equal(c.maxAccountSessions, 20);
    assert.equal(c.logLevel, 'debug');
    assert.equal(c.nodeId, 'edge-1');
    assert.equal(c.inspectorRetentionDays, 7);
    assert.equal(c.inspectorMaxPerAccount, 500);
    assert.equal(c.usageFlushMs, 250);
    assert.equal(c.signup, 'closed');
  });

  it('reads SVC_EDGE_TARGET, and defaults it to a multi-label shared domain', () => {
    assert.deepEqual(loadConfig({ SVC_EDGE_TARGET: '203.0.113.7, Edge.Example.NET' }, CWD).edgeTarget, {
      hostname: 'edge.example.net',
      ips: ['203.0.113.7'],
    });
    assert.deepEqual(loadConfig({ SVC_SHARED_DOMAIN: 'tunnels.example.com' }, CWD).edgeTarget, { hostname: 'tunnels.example.com' });
    assert.equal(loadConfig({}, CWD).edgeTarget, undefined);
    assert.ok(Object.isFrozen(loadConfig({ SVC_EDGE_TARGET: '203.0.113.7' }, CWD).edgeTarget?.ips));
  });

  it('merges SVC_PLANS over the defaults field by field', () => {
    const c = loadConfig({ SVC_PLANS: '{"free":{"tunnels":3,"bandwidthBytes":1073741824}}' }, CWD);
    assert.deepEqual(c.plans.free, { tunnels: 3, domains: 2, bandwidthBytes: 1073741824, webhooks: 2, tcpAddresses: 1 });
    assert.deepEqual(c.plans.pro, DEFAULT_PLANS.pro);
  });
});

describe('SVC_TCP_PORTS', () => {
  it('takes a range, a single port, or off', () => {
    assert.deepEqual(loadConfig({ SVC_TCP_PORTS: '30000-30009' }, CWD).tcpPorts, { from: 30000, to: 30009 });
    assert.deepEqual(loadConfig({ SVC_TCP_PORTS: '30000' }, CWD).tcpPorts, { from: 30000, to: 30000 });
    assert.equal(loadConfig({ SVC_TCP_PORTS: 'off' }, CWD).tcpPorts, undefined);
  });

  it("refuses a range that includes one of the edge's own ports", () => {
    assert.throws(
      () => loadConfig({ SVC_TCP_PORTS: '8000-8999' }, CWD),
      new Error(
        "invalid SVC_TCP_PORTS: 8000-8999 includes SVC_HTTP_PORT's port 8080; TCP tunnels need ports the edge does not listen on itself",
      ),
    );
    assert.throws(
      () => loadConfig({ SVC_TCP_PORTS: '443', SVC_HTTPS_PORT: '443' }, CWD),
      /^Error: invalid SVC_TCP_PORTS: 443 includes SVC_HTTPS_PORT's port 443;/,
    );
    const cluster = { SVC_DATABASE_URL: 'postgres://db/svc', SVC_CLUSTER_SECRET: 'x'.repeat(16) };
    assert.throws(
      () => loadConfig({ ...cluster, SVC_NODE_URL: 'http://10.0.0.5:20500', SVC_TCP_PORTS: '20000-20999' }, CWD),
      /includes SVC_NODE_URL's port 20500/,
    );
    // Port 0 (a free port, picked at start) never clashes.
    assert.ok(
      loadConfig({ ...cluster, SVC_NODE_URL: 'http://10.0.0.5:0', SVC_HTTP_PORT: '0', SVC_HTTPS_PORT: '0', SVC_TCP_PORTS: '1-65535' }, CWD)
        .tcpPorts,
    );
  });
});

describe('loadConfig errors name the variable', () => {
  const cases: Array<[Record<string, string>, string]> = [
    [{ SVC_TCP_PORTS: '20999-20000' }, 'invalid SVC_TCP_PORTS: expected a port range such as 20000-20999, a port, or off'],
    [{ SVC_TCP_PORTS: '0-10' }, 'invalid SVC_TCP_PORTS: expected a port range such as 20000-20999, a port, or off'],
    [{ SVC_HTTP_PORT: '80a' }, 'invalid SVC_HTTP_PORT: expected an integer 0-65535'],
    [{ SVC_HTTP_PORT: '65536' }, 'invalid SVC_HTTP_PORT: expected an integer 0-65535'],
    [{ SVC_HTTP_PORT: '-1' }, 'invalid SVC_HTTP_PORT: expected an integer 0-65535'],
    [{ SVC_HTTP_PORT: ' 8080' }, 'invalid SVC_HTTP_PORT: expected an integer 0-65535'],
    [{ SVC_HTTPS_PORT: '1.5' }, 'invalid SVC_HTTPS_PORT: expected an integer 0-65535'],
    [{ SVC_DRAIN_MS: '-5' }, 'invalid SVC_DRAIN_MS: expected an integer 0-600000'],
    [{ SVC_UNREADY_MS: '1.5' }, 'invalid SVC_UNREADY_MS: expected an integer 0-600000'],
    [{ SVC_HOLD_MS: '10s' }, 'invalid SVC_HOLD_MS: expected an integer 0-600000'],
    [{ SVC_PUBLIC_HTTPS_PORT: '0' }, 'invalid SVC_PUBLIC_HTTPS_PORT: expected an integer 1-65535'],
    [{ SVC_SHARED_DOMAIN: 'exa mple.com' }, 'invalid SVC_SHARED_DOMAIN: expected a hostname'],
    [{ SVC_SHARED_DOMAIN: '-bad.example.com' }, 'invalid SVC_SHARED_DOMAIN: expected a hostname'],
    [{ SVC_SHARED_DOMAIN: 'example.com.' }, 'invalid SVC_SHARED_DOMAIN: expected a hostname'],
    [{ SVC_SHARED_DOMAIN: 'localhost:8080' }, 'invalid SVC_SHARED_DOMAIN: expected a hostname'],
    [{ SVC_BIND_HOST: 'not an ip' }, 'invalid SVC_BIND_HOST: expected an IP address'],
    [{ SVC_DATABASE_URL: 'mysql://db/svc' }, 'invalid SVC_DATABASE_URL: expected a postgres:// or postgresql:// URL'],
    [{ SVC_DATABASE_URL: 'svc.sqlite' }, 'invalid SVC_DATABASE_URL: expected a postgres:// or postgresql:// URL'],
    [{ SVC_TLS_CERT: 'cert.pem' }, 'invalid SVC_TLS_KEY: expected SVC_TLS_CERT and SVC_TLS_KEY to be set together'],
    [{ SVC_TLS_KEY: 'key.pem' }, 'invalid SVC_TLS_CERT: expected SVC_TLS_CERT and SVC_TLS_KEY to be set together'],
    [{ SVC_ACME_DIRECTORY: 'ftp://acme/dir' }, 'invalid SVC_ACME_DIRECTORY: expected an http(s) URL'],
    [{ SVC_ACME_EMAIL: 'ops' }, 'invalid SVC_ACME_EMAIL: expected an email address'],
    [{ SVC_DNS_SERVERS: '1.1.1.1,dns.google' }, 'invalid SVC_DNS_SERVERS: expected a comma-separated list'],
    [{ SVC_DNS_SERVERS: '1.1.1.1:0' }, 'invalid SVC_DNS_SERVERS: expected a comma-separated list'],
    [{ SVC_DNS_SERVERS: '1.1.1.1,' }, 'invalid SVC_DNS_SERVERS: expected a comma-separated list'],
    [{ SVC_EDGE_TARGET: 'a.example.com,b.example.com' }, 'invalid SVC_EDGE_TARGET: expected one hostname and/or IPv4 addresses'],
    [{ SVC_EDGE_TARGET: '::1' }, 'invalid SVC_EDGE_TARGET: expected one hostname and/or IPv4 addresses'],
    [{ SVC_PLANS: '{free:' }, 'invalid SVC_PLANS: expected JSON such as {"free":{"tunnels":3}}'],
    [{ SVC_PLANS: '{"free":{"tunnels":-1}}' }, 'invalid SVC_PLANS: expected a non-negative integer at free.tunnels'],
    [{ SVC_PLANS: '{"free":{"tunnels":2.5}}' }, 'invalid SVC_PLANS: expected a non-negative integer at free.tunnels'],
    [{ SVC_PLANS: '{"pro":{"domains":"25"}}' }, 'invalid SVC_PLANS: expected a non-negative integer at pro.domains'],
    [
      { SVC_PLANS: '{"team":{"tunnels":5}}' },
      'invalid SVC_PLANS: expected only free/pro with tunnels/domains/bandwidthBytes/webhooks/tcpAddresses (unknown: team)',
    ],
    [
      { SVC_PLANS: '{"free":{"tunnel":5}}' },
      'invalid SVC_PLANS: expected only free/pro with tunnels/domains/bandwidthBytes/webhooks/tcpAddresses (unknown: tunnel)',
    ],
    [{ SVC_PLANS: '[1]' }, 'invalid SVC_PLANS: expected JSON such as {"free":{"tunnels":3}}'],
    [{ SVC_PLANS: '{"free":5}' }, 'invalid SVC_PLANS: expected JSON such as {"free":{"tunnels":3}} (bad value at free)'],
    [{ SVC_HEARTBEAT_MS: '5' }, 'invalid SVC_HEARTBEAT_MS: expected an integer 10-600000'],
    [{ SVC_MAX_SESSIONS: '0' }, 'invalid SVC_MAX_SESSIONS: expected an integer 1-1000000'],
    [{ SVC_MAX_ACCOUNT_SESSIONS: 'many' }, 'invalid SVC_MAX_ACCOUNT_SESSIONS: expected an integer 1-1000000'],
    [{ SVC_LOG_LEVEL: 'verbose' }, 'invalid SVC_LOG_LEVEL: expected one of fatal, error, warn, info, debug, trace, silent'],
    [{ SVC_NODE_ID: 'edge 1' }, 'invalid SVC_NODE_ID: expected 1-100 characters'],
    [{ SVC_INSPECTOR_RETENTION_DAYS: '0' }, 'invalid SVC_INSPECTOR_RETENTION_DAYS: expected an integer 1-3650'],
    [{ SVC_INSPECTOR_MAX_PER_ACCOUNT: '1e5' }, 'invalid SVC_INSPECTOR_MAX_PER_ACCOUNT: expected an integer 1-100000000'],
    [{ SVC_USAGE_FLUSH_MS: '10' }, 'invalid SVC_USAGE_FLUSH_MS: expected an integer 100-60000'],
    [{ SVC_SIGNUP: 'Open' }, 'invalid SVC_SIGNUP: expected one of open, closed'],
    [{ SVC_NODE_URL: 'https://10.0.0.5:8090' }, 'invalid SVC_NODE_URL: expected http://host:port'],
    [{ SVC_NODE_URL: 'http://10.0.0.5:8090/peer' }, 'invalid SVC_NODE_URL: expected http://host:port'],
    [{ SVC_NODE_URL: '10.0.0.5:8090' }, 'invalid SVC_NODE_URL: expected http://host:port'],
    [{ SVC_CLUSTER_SECRET: 'short' }, 'invalid SVC_CLUSTER_SECRET: expected at least 16 characters without spaces'],
    [
      { SVC_NODE_URL: 'http://10.0.0.5:8090', SVC_DATABASE_URL: 'postgres://db/svc' },
      'invalid SVC_CLUSTER_SECRET: SVC_NODE_URL is set, so the secret shared by the nodes must be set too',
    ],
    [
      { SVC_CLUSTER_SECRET: 'a-long-enough-secret', SVC_DATABASE_URL: 'postgres://db/svc' },
      'invalid SVC_NODE_URL: SVC_CLUSTER_SECRET is set, so this node must say where its peers reach it',
    ],
    [
      { SVC_NODE_URL: 'http://10.0.0.5:8090', SVC_CLUSTER_SECRET: 'a-long-enough-secret' },
      'invalid SVC_NODE_URL: several nodes share one PostgreSQL store; set SVC_DATABASE_URL to it',
    ],
  ];
  for (const [env, message] of cases) {
    it(`${Object.entries(env)[0]?.join('=')} -> ${message}`, () => {
      assert.throws(
        () => loadConfig(env, CWD),
        (err: Error) => {
          assert.ok(err.message.startsWith(message), `got: ${err.message}`);
          return true;
        },
      );
    });
  }

  it('reports every bad variable at once', () => {
    assert.throws(() => loadConfig({ SVC_HTTP_PORT: 'x', SVC_LOG_LEVEL: 'loud' }, CWD), {
      message:
        'invalid SVC_HTTP_PORT: expected an integer 0-65535; invalid SVC_LOG_LEVEL: expected one of fatal, error, warn, info, debug, trace, silent',
    });
  });

  it('a node joins a cluster with SVC_NODE_URL, SVC_CLUSTER_SECRET and PostgreSQL, and stays single without them', () => {
    assert.equal(loadConfig({}, CWD).cluster, undefined);
    const config = loadConfig(
      { SVC_NODE_URL: 'http://10.0.0.5:8090/', SVC_CLUSTER_SECRET: 'a-long-enough-secret', SVC_DATABASE_URL: 'postgres://db/svc' },
      CWD,
    );
    assert.deepEqual(config.cluster, { nodeUrl: 'http://10.0.0.5:8090', secret: 'a-long-enough-secret' });
  });

  it('never echoes the cluster secret', () => {
    assert.throws(
      () => loadConfig({ SVC_CLUSTER_SECRET: 'hunter2 hunter2 hunter2' }, CWD),
      (err: Error) => {
        assert.ok(!err.message.includes('hunter2'));
        return true;
      },
    );
  });

  it('never echoes the value of a bad variable', () => {
    assert.throws(
      () => loadConfig({ SVC_DATABASE_URL: 'mysql://root:hunter2@db/svc' }, CWD),
      (err: Error) => {
        assert.ok(!err.message.includes('hunter2'));
        return true;
      },
    );
  });
});
