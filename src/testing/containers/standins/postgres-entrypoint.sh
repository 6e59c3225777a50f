#!/bin/sh
# The official image's first start, in short: a new cluster owned by POSTGRES_USER with its
# password, the database POSTGRES_DB, password logins from anywhere; then the server.
set -eu
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  pw="$(mktemp)"
  printf '%s\n' "$POSTGRES_PASSWORD" > "$pw"
  initdb -D "$PGDATA" -U "$POSTGRES_USER" --pwfile="$pw" --auth-local=trust --auth-host=scram-sha-256 >/dev/null
  rm -f "$pw"
  echo "host all all 0.0.0.0/0 scram-sha-256" >> "$PGDATA/pg_hba.conf"
  pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start >/dev/null
  createdb -U "$POSTGRES_USER" "${POSTGRES_DB:-$POSTGRES_USER}"
  pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
fi
exec postgres -D "$PGDATA" -c listen_addresses='*'
