import assert from 'node:assert/strict';
import { it } from 'node:test';
import { parseRemoteAddr, portOfTcpHostname, tcpHostname } from './tcp-address.js';

it('names a TCP tunnel <shared domain>:<port> and reads the port back only for that domain', () => {
  assert.equal(tcpHostname('localhost', 20417), 'localhost:20417');
  assert.equal(portOfTcpHostname('localhost', 'localhost:20417'), 20417);
  assert.equal(portOfTcpHostname('localhost', 'other:20417'), undefined);
  assert.equal(portOfTcpHostname('localhost', 'abc.localhost'), undefined);
  assert.equal(portOfTcpHostname('localhost', 'localhost:99999'), undefined);
});

it('reads a --remote-addr given as host:port or a bare port', () => {
  assert.deepEqual(parseRemoteAddr('tunnels.example.com:20001'), { host: 'tunnels.example.com', port: 20001 });
  assert.deepEqual(parseRemoteAddr('20001'), { host: undefined, port: 20001 });
  assert.deepEqual(parseRemoteAddr(':20001'), { host: '', port: 20001 });
  assert.equal(parseRemoteAddr('host:'), undefined);
  assert.equal(parseRemoteAddr('host:0'), undefined);
});
