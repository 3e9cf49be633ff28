import assert from "node:assert/strict";
import { test } from "node:test";
import { isValidHostname, normalizeHostname } from "./hostname.js";

test("normalizeHostname lower-cases and drops one trailing dot", () => {
  assert.equal(normalizeHostname("ABC.LocalHost."), "abc.localhost");
  assert.equal(normalizeHostname("abc.localhost"), "abc.localhost");
});

test("isValidHostname accepts DNS hostnames a certificate can name", () => {
  for (const name of ["localhost", "abc.localhost", "xn--bcher-kva.example", "a-b.c0.example", `${"a".repeat(63)}.x`]) {
    assert.equal(isValidHostname(name), true, name);
  }
});

test("isValidHostname rejects IPs, bad labels and names over 253 characters", () => {
  const long = `${"a".repeat(60)}.`.repeat(5) + "localhost"; // 314 characters
  for (const name of ["", "127.0.0.1", "::1", "a_b.localhost", "-a.localhost", "a-.localhost", "a..localhost", "*.localhost", "a b", `${"a".repeat(64)}.x`, long]) {
    assert.equal(isValidHostname(name), false, name);
  }
});
