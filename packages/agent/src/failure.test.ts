import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BindMessages, ErrorCode, Messages, SvcError } from '@svcrouter/protocol';
import { explainFailure, notListeningWarning } from './failure.js';

const RETRY = /run svc again; if it keeps failing/;

test('a bind refused for its access rules is not answered with a hint to retry', () => {
  for (const message of [
    BindMessages.policyInvalid('cidrAllow: "10.0.0.0/33": the prefix length must be 0 to 32'),
    BindMessages.policyUnsupported,
    BindMessages.oidcUnsupported,
    BindMessages.oidcUnknown('google', []),
    BindMessages.tlsNoAccess,
  ]) {
    const { sentence, hint } = explainFailure(new SvcError(ErrorCode.POLICY_INVALID, message));
    assert.equal(sentence, message);
    assert.doesNotMatch(hint, RETRY, message);
    assert.match(hint, /running svc again unchanged gets the same answer$/, message);
  }
});

test('a name protected by access rules gets a hint that says how to take it', () => {
  const failure = explainFailure(new SvcError(ErrorCode.POLICY_INVALID, BindMessages.policyRequired('app.svc.example.com')));
  assert.equal(
    failure.sentence,
    'app.svc.example.com is protected by access rules; bind it with rules, or release it first (DELETE /v1/tunnels/:id)',
  );
  assert.match(failure.hint, /^give svc the tunnel's access rules \(GET \/v1\/tunnels shows them\), .* DELETE \/v1\/tunnels\/<id>/);
});

test('pool refusals say what to do with --pool instead of picking another name', () => {
  const join = explainFailure(new SvcError(ErrorCode.NAME_TAKEN, BindMessages.poolMismatch('app.svc.example.com', true)));
  assert.match(join.hint, /^add --pool/);
  const takeOver = explainFailure(new SvcError(ErrorCode.NAME_TAKEN, BindMessages.poolMismatch('app.svc.example.com', false)));
  assert.match(takeOver.hint, /without --pool/);
  const old = explainFailure(new SvcError(ErrorCode.PROTOCOL, BindMessages.poolUnsupported));
  assert.match(old.hint, /^upgrade svc-server/);
});

test('a name held by another account still suggests another name, and a transient failure still suggests a retry', () => {
  assert.match(
    explainFailure(new SvcError(ErrorCode.NAME_TAKEN, BindMessages.nameTaken('app.svc.example.com'))).hint,
    /^pick another name/,
  );
  assert.match(explainFailure(new SvcError(ErrorCode.INTERNAL, BindMessages.noFreeName)).hint, RETRY);
  assert.match(explainFailure(new Error('socket hang up')).hint, RETRY);
});

test('warns of a local target where nothing listens with what visitors get meanwhile: a page, or a closed connection', () => {
  assert.equal(
    notListeningWarning('http://localhost:3000', 'ECONNREFUSED').sentence,
    'warning: nothing answers at http://localhost:3000 yet (ECONNREFUSED); visitors get a 502 page until it does',
  );
  assert.equal(
    notListeningWarning('localhost:5432', 'ECONNREFUSED', true).sentence,
    "warning: nothing answers at localhost:5432 yet (ECONNREFUSED); each visitor's connection is closed at once until it does",
  );
});

test('an invalid option other than the subdomain is not answered with the subdomain rule', () => {
  for (const message of [
    BindMessages.tcpAddressInvalid('nonsense'),
    'the TLS certificate (tlsCert, --tls-cert) is not a PEM certificate (no start line)',
    'at most 32 routes per tunnel, not 33',
  ]) {
    const { hint } = explainFailure(new SvcError(ErrorCode.NAME_INVALID, message));
    assert.doesNotMatch(hint, /subdomain/, message);
    assert.match(hint, /running svc again unchanged gets the same answer$/, message);
  }
  const subdomain = explainFailure(new SvcError(ErrorCode.NAME_INVALID, BindMessages.subdomainInvalid('-x')));
  assert.match(subdomain.hint, /^give --subdomain or SVC_SUBDOMAIN one DNS label/);
});

test('a TCP address refused at the bind is not answered with a hint about names', () => {
  for (const message of [BindMessages.tcpAddressNotYours('svc.example.com:20001'), BindMessages.tcpAddressTaken('svc.example.com:20001')]) {
    const { hint } = explainFailure(new SvcError(ErrorCode.NAME_TAKEN, message));
    assert.doesNotMatch(hint, /--subdomain/, message);
    assert.match(hint, /leave --remote-addr out for a port at random$/, message);
  }
  const exhausted = explainFailure(new SvcError(ErrorCode.TCP_PORT_UNAVAILABLE, Messages.TCP_PORT_UNAVAILABLE)).hint;
  assert.match(exhausted, /^every port of the edge's TCP range is in use: stop another TCP tunnel/);
  const outside = explainFailure(new SvcError(ErrorCode.TCP_PORT_UNAVAILABLE, BindMessages.tcpPortOutsideRange(22, 20000, 20999))).hint;
  assert.match(outside, /^name a port inside the range with --remote-addr/);
  for (const hint of [exhausted, outside]) {
    assert.match(hint, /SVC_TCP_PORTS/);
    assert.doesNotMatch(hint, RETRY);
  }
});
