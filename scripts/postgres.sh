#!/usr/bin/env bash
# A local PostgreSQL for the Dagster instance in dagster.postgres.yaml: Debian's `postgresql`, one
# cluster under the data root ($TRUFFLE_HOME, else data/) in postgres/, listening on 127.0.0.1 only.
#
#   scripts/postgres.sh [start]   install the package if missing (as root, apt-get), initdb once, start,
#                                 create the role and the database; prints the connection variables
#                                 on stdout, so `eval "$(scripts/postgres.sh)"` sets them
#   scripts/postgres.sh stop      stop the server (the cluster stays)
#   scripts/postgres.sh status    exit 0 when it is running
#
# Every step checks before it acts: running it again is harmless. Settings (all optional):
#   TRUFFLE_PG_DIR       the folder holding the cluster (default <data root>/postgres)
#   DAGSTER_PG_PORT      5433 (Debian's own cluster, if any, keeps 5432)
#   DAGSTER_PG_USERNAME  dagster          DAGSTER_PG_DB  dagster
#   DAGSTER_PG_PASSWORD  generated once into <dir>/password (mode 600) unless set
set -euo pipefail
cd "$(dirname "$0")/.."

ROOT="${TRUFFLE_HOME:-$PWD/data}"
DIR="$(mkdir -p "${TRUFFLE_PG_DIR:-$ROOT/postgres}" && cd "${TRUFFLE_PG_DIR:-$ROOT/postgres}" && pwd)"
PGDATA="$DIR/cluster"
PORT="${DAGSTER_PG_PORT:-5433}"
ROLE="${DAGSTER_PG_USERNAME:-dagster}"
DB="${DAGSTER_PG_DB:-dagster}"
ACTION="${1:-start}"

say() { echo "postgres.sh: $*" >&2; }
die() { say "$*"; exit 1; }

# Debian keeps the server binaries off PATH, in /usr/lib/postgresql/<major>/bin
bindir() {
  if command -v pg_ctl >/dev/null && command -v initdb >/dev/null; then
    dirname "$(readlink -f "$(command -v pg_ctl)")"
    return
  fi
  local d
  d="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)"
  [ -n "$d" ] && [ -x "$d/pg_ctl" ] && echo "$d"
}

BIN="$(bindir || true)"
if [ -z "$BIN" ]; then
  [ "$ACTION" = start ] || die "PostgreSQL is not installed"
  command -v apt-get >/dev/null || die "PostgreSQL is not installed and apt-get is absent: install PostgreSQL ≥ 13 yourself"
  [ "$(id -u)" = 0 ] || die "PostgreSQL is not installed: run this script as root once (it runs apt-get install postgresql)"
  say "installing Debian's postgresql (apt-get)…"
  export DEBIAN_FRONTEND=noninteractive
  { apt-get install -y -q postgresql || { apt-get update -q && apt-get install -y -q postgresql; }; } >/dev/null \
    || die "apt-get install postgresql failed"
  BIN="$(bindir || true)"
  [ -n "$BIN" ] || die "postgresql installed but no pg_ctl found under /usr/lib/postgresql/*/bin"
fi

# The server refuses to run as root: as root, the cluster belongs to Debian's `postgres` user.
if [ "$(id -u)" = 0 ]; then
  OWNER=postgres
  id -u "$OWNER" >/dev/null 2>&1 || useradd --system --home-dir "$DIR" --shell /usr/sbin/nologin "$OWNER"
  as_owner() { runuser -u "$OWNER" -- "$@"; }
else
  OWNER="$(id -un)"
  as_owner() { "$@"; }
fi

if [ -d "$PGDATA" ] && [ "$(stat -c %U "$PGDATA")" != "$OWNER" ]; then
  die "$PGDATA belongs to $(stat -c %U "$PGDATA"), not $OWNER: run this as root (or that user), or set TRUFFLE_PG_DIR"
fi

running() { [ -f "$PGDATA/PG_VERSION" ] && as_owner "$BIN/pg_ctl" -D "$PGDATA" status >/dev/null 2>&1; }

case "$ACTION" in
  stop)
    if running; then as_owner "$BIN/pg_ctl" -D "$PGDATA" -m fast -w stop >/dev/null && say "stopped"; else say "not running"; fi
    exit 0 ;;
  status)
    running && { say "running on 127.0.0.1:$(sed -n 's/^port = //p' "$PGDATA/truffle.conf" 2>/dev/null || echo "$PORT")"; exit 0; }
    say "not running"; exit 1 ;;
  start) ;;
  *) die "usage: scripts/postgres.sh [start|stop|status]" ;;
esac

# the password: given, or generated once and kept beside the cluster (readable by whoever ran this)
if [ -z "${DAGSTER_PG_PASSWORD:-}" ]; then
  [ -s "$DIR/password" ] || (umask 077 && od -An -N18 -tx1 /dev/urandom | tr -d ' \n' >"$DIR/password")
  DAGSTER_PG_PASSWORD="$(cat "$DIR/password")"
fi
case "$DAGSTER_PG_PASSWORD$ROLE$DB" in *"'"*|*'"'*) die "quotes are not allowed in the role, database or password" ;; esac

if [ ! -f "$PGDATA/PG_VERSION" ]; then
  mkdir -p "$PGDATA"
  [ "$OWNER" = "$(id -un)" ] || chown "$OWNER" "$PGDATA"
  chmod 700 "$PGDATA"
  as_owner test -w "$PGDATA" \
    || die "user $OWNER cannot write $PGDATA (a parent folder is closed to it): set TRUFFLE_PG_DIR to a folder it can reach"
  say "initdb $PGDATA"
  # the socket lives inside the cluster folder (mode 700): only its owner reaches it, without a password;
  # TCP on 127.0.0.1 needs the role's password
  as_owner "$BIN/initdb" -D "$PGDATA" -U postgres -E UTF8 --locale=C.UTF-8 \
    --auth-local=trust --auth-host=scram-sha-256 >/dev/null
  echo "include_if_exists = 'truffle.conf'" | as_owner tee -a "$PGDATA/postgresql.conf" >/dev/null
fi

if running; then
  PORT="$(sed -n 's/^port = //p' "$PGDATA/truffle.conf")"
else
  printf "%s\n" "listen_addresses = '127.0.0.1'" "port = $PORT" "unix_socket_directories = '$PGDATA'" \
    "unix_socket_permissions = 0700" "max_connections = 200" | as_owner tee "$PGDATA/truffle.conf" >/dev/null
  # another server (a second checkout's cluster, Debian's own) on the port: say so, not just "did not start"
  if (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; then
    die "127.0.0.1:$PORT is already taken by another server; stop it or set DAGSTER_PG_PORT"
  fi
  say "starting on 127.0.0.1:$PORT"
  as_owner "$BIN/pg_ctl" -D "$PGDATA" -l "$PGDATA/server.log" -w -t 60 start >/dev/null \
    || die "the server did not start; see $PGDATA/server.log"
fi

sql() { as_owner "$BIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$PGDATA" -p "$PORT" -U postgres -d postgres -tAc "$1"; }
if [ "$(sql "SELECT 1 FROM pg_roles WHERE rolname = '$ROLE'")" = 1 ]; then
  sql "ALTER ROLE \"$ROLE\" LOGIN PASSWORD '$DAGSTER_PG_PASSWORD'"
else
  sql "CREATE ROLE \"$ROLE\" LOGIN PASSWORD '$DAGSTER_PG_PASSWORD'"
fi
[ "$(sql "SELECT 1 FROM pg_database WHERE datname = '$DB'")" = 1 ] || sql "CREATE DATABASE \"$DB\" OWNER \"$ROLE\""
say "database $DB ready for role $ROLE (cluster $PGDATA)"

echo "export DAGSTER_PG_HOST=127.0.0.1 DAGSTER_PG_PORT=$PORT DAGSTER_PG_USERNAME=$ROLE DAGSTER_PG_PASSWORD=$DAGSTER_PG_PASSWORD DAGSTER_PG_DB=$DB"
