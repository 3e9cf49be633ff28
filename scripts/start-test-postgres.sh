#!/usr/bin/env bash
# Starts a throwaway PostgreSQL cluster for the store test suite and prints its
# URL on stdout (everything else goes to stderr):
#
#   export SVC_TEST_DATABASE_URL="$(scripts/start-test-postgres.sh)"
#   ...run tests...
#   scripts/start-test-postgres.sh stop <data dir printed on stderr>
#
# The cluster lives in a fresh temp dir, listens on 127.0.0.1 only, on a free
# port, with trust authentication: never use it for anything but tests. When
# run as root, the server runs as the `postgres` user (PostgreSQL refuses root).
# Needs the Debian/Ubuntu package `postgresql` (apt-get install -y postgresql).
set -euo pipefail

die() { echo "start-test-postgres: $*" >&2; exit 1; }

# Newest installed server binaries, else whatever is on PATH.
bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
if [[ -z "$bindir" ]]; then
  command -v initdb >/dev/null 2>&1 || die "initdb not found: apt-get install -y postgresql"
  bindir=$(dirname "$(command -v initdb)")
fi

as_owner() {
  if [[ $(id -u) -eq 0 ]]; then
    id postgres >/dev/null 2>&1 || die "running as root but there is no postgres user to run the server"
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

# pg_ctl on a cluster made by this script, as its owner (fault tests stop and start it):
#   start-test-postgres.sh ctl <data dir> restart -m fast
if [[ "${1:-}" == "ctl" ]]; then
  dir=${2:?usage: start-test-postgres.sh ctl <data dir> <pg_ctl arguments>}
  [[ -f "$dir/PG_VERSION" ]] || die "$dir is not a cluster made by this script"
  shift 2
  exec_owner() { if [[ $(id -u) -eq 0 ]]; then exec runuser -u postgres -- "$@"; else exec "$@"; fi; }
  exec_owner "$bindir/pg_ctl" -D "$dir" "$@"
fi

if [[ "${1:-}" == "stop" ]]; then
  dir=${2:?usage: start-test-postgres.sh stop <data dir>}
  [[ -f "$dir/PG_VERSION" ]] || die "$dir is not a cluster made by this script"
  as_owner "$bindir/pg_ctl" -D "$dir" stop -m fast >&2 || true
  rm -rf "$dir"
  exit 0
fi

dir=$(mktemp -d "${TMPDIR:-/tmp}/svc-test-pg.XXXXXX")
chmod 700 "$dir"
if [[ $(id -u) -eq 0 ]]; then chown postgres: "$dir"; fi

as_owner "$bindir/initdb" -D "$dir" -U postgres --auth=trust --encoding=UTF8 --no-locale >"$dir.initdb.log" 2>&1 ||
  { cat "$dir.initdb.log" >&2; die "initdb failed"; }
rm -f "$dir.initdb.log"

# A port that was free a moment ago; retried if someone takes it first.
free_port() { node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }

for attempt in 1 2 3 4 5; do
  port=$(free_port)
  if as_owner "$bindir/pg_ctl" -D "$dir" -w -t 30 -l "$dir/server.log" \
      -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=off -c full_page_writes=off" start >&2; then
    echo "postgres data dir: $dir (stop with: $0 stop $dir)" >&2
    echo "postgres://postgres@127.0.0.1:$port/postgres"
    exit 0
  fi
  echo "start-test-postgres: port $port failed (attempt $attempt), retrying" >&2
done
cat "$dir/server.log" >&2 || true
die "could not start PostgreSQL"
