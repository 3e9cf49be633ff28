import assert from 'node:assert/strict';
import { it } from 'node:test';
import { portOfRemoteAddr, portOfTcpHostname, tcpHostname } from './tcp-address.js';

it('names a TCP tunnel <shared domain>:<port> and reads the port back only for that domain', () => {
  assert.equal(tcpHostname('localhost', 20417), 'localhost:20417');
  assert.equal(portOfTcpHostname('localhost', 'localhost:20417'), 20417);
  assert.equal(portOfTcpHostname('localhost', 'other:20417'), undefined);
  assert.equal(portOfTcpHostname('localhost', 'abc.localhost'), undefined);
  assert.equal(portOfTcpHostname('localhost', 'localhost:99999'), undefined);
});

it('reads the port of a --remote-addr given as host:port or a bare port', () => {
  assert.equal(portOfRemoteAddr('tunnels.example.com:20001'), 20001);
  assert.equal(portOfRemoteAddr('20001'), 20001);
  assert.equal(portOfRemoteAddr('host:'), undefined);
  assert.equal(portOfRemoteAddr('host:0'), undefined);
});
