import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode, SvcError } from '@svcrouter/protocol';
import { EdgePair, parseServerUrls } from './edge-servers.js';

describe('parseServerUrls', () => {
  it('takes one URL as it is, and several separated by commas, spaces trimmed and repeats dropped', () => {
    assert.deepEqual(parseServerUrls('http://localhost:8080'), ['http://localhost:8080']);
    assert.deepEqual(parseServerUrls('https://a.example.com, https://b.example.com:8443 ,http://10.0.0.7:8080'), [
      'https://a.example.com',
      'https://b.example.com:8443',
      'http://10.0.0.7:8080',
    ]);
    assert.deepEqual(parseServerUrls('http://a:1,http://a:1,http://b:2'), ['http://a:1', 'http://b:2']);
  });

  it('refuses a bad entry with EDGE_UNREACHABLE and a sentence naming it', () => {
    const refused = (value: string, entry: string): void => {
      assert.throws(
        () => parseServerUrls(value),
        (error: unknown) => {
          assert.ok(error instanceof SvcError);
          assert.equal(error.code, ErrorCode.EDGE_UNREACHABLE);
          assert.equal(
            error.message,
            `invalid SVC_SERVER "${value}": ${entry} is not an http:// or https:// URL (give one edge URL, or several separated by commas)`,
          );
          return true;
        },
      );
    };
    refused('localhost:8080', '"localhost:8080"');
    refused('http://a:1,b.example.com', '"b.example.com"');
    refused('http://a:1,,http://b:2', 'an empty entry');
    refused('http://a:1,', 'an empty entry');
    refused('ftp://a.example.com', '"ftp://a.example.com"');
    refused('', 'an empty entry');
  });

  it('refuses a path, query or fragment, which dialling would drop, and keeps a bare trailing slash', () => {
    assert.deepEqual(parseServerUrls('https://edge.example/'), ['https://edge.example/']);
    for (const [value, rest] of [
      ['https://edge.example/svc', '/svc'],
      ['http://a:1,https://edge.example:8443/tunnels/', '/tunnels/'],
      ['https://edge.example/?region=eu', '/?region=eu'],
      ['https://edge.example#x', '/#x'],
    ] as const) {
      assert.throws(
        () => parseServerUrls(value),
        (error: unknown) =>
          error instanceof SvcError &&
          error.code === ErrorCode.EDGE_UNREACHABLE &&
          error.message ===
            `invalid SVC_SERVER "${value}": an edge URL is a scheme, host and port only, with no path or query ("${rest}"); the edge serves agents at its root`,
        value,
      );
    }
  });

  it('refuses a user name or password in an edge URL, and never echoes them', () => {
    for (const value of ['https://alice:s3cret@edge.example.com', 'http://a:1, http://alice@b.example.com:8080']) {
      assert.throws(
        () => parseServerUrls(value),
        (error: unknown) => {
          assert.ok(error instanceof SvcError);
          assert.equal(error.code, ErrorCode.EDGE_UNREACHABLE);
          assert.match(error.message, /an edge URL carries no user name or password \(the agent signs in with SVC_TOKEN alone\)$/);
          assert.doesNotMatch(error.message, /alice|s3cret/);
          return true;
        },
      );
    }
    // A bad entry beside one with a password: the message names the list without the password.
    assert.throws(
      () => parseServerUrls('b.example.com,https://alice:s3cret@a.example.com'),
      (error: Error) => {
        assert.equal(
          error.message,
          'invalid SVC_SERVER "b.example.com,https://…@a.example.com": "b.example.com" is not an http:// or https:// URL (give one edge URL, or several separated by commas)',
        );
        return true;
      },
    );
  });
});

describe('EdgePair', () => {
  it("a session that lost its node moves to the next URL the other session is not using, round the list's end", () => {
    const pair = new EdgePair(['http://a', 'http://b', 'http://c']);
    assert.equal(pair.standbyStart('http://a'), 'http://b');
    assert.equal(pair.next('http://a', 'http://b'), 'http://c');
    assert.equal(pair.next('http://c', 'http://b'), 'http://a');
    assert.equal(pair.next('http://b', 'http://c'), 'http://a');
    // Two URLs: the lost one is dialled again, never the other session's.
    const two = new EdgePair(['http://a', 'http://b']);
    assert.equal(two.next('http://a', 'http://b'), 'http://a');
  });
});
