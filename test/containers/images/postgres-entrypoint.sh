#!/bin/sh
# The official postgres image's entrypoint, in brief: on the first start, an empty $PGDATA gets a cluster
# whose superuser is POSTGRES_USER (default postgres) with POSTGRES_PASSWORD, and the database
# POSTGRES_DB (default: the user's name); clients over TCP authenticate with scram-sha-256. Then the
# command runs, as the postgres user.
set -eu
if [ "${1:-}" != postgres ]; then exec "$@"; fi

if [ "$(id -u)" = 0 ]; then
  mkdir -p "$PGDATA" /var/run/postgresql
  chown postgres:postgres "$PGDATA" /var/run/postgresql
  chmod 0700 "$PGDATA"
  exec setpriv --reuid=postgres --regid=postgres --init-groups "$0" "$@"
fi

if [ ! -s "$PGDATA/PG_VERSION" ]; then
  : "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD must be set (the superuser password)}"
  user=${POSTGRES_USER:-postgres}
  db=${POSTGRES_DB:-$user}
  pwfile=$(mktemp)
  printf '%s\n' "$POSTGRES_PASSWORD" >"$pwfile"
  initdb --username="$user" --pwfile="$pwfile" --auth-local=trust --auth-host=scram-sha-256 \
    --encoding=UTF8 -D "$PGDATA" >/dev/null
  rm -f "$pwfile"
  echo 'host all all all scram-sha-256' >>"$PGDATA/pg_hba.conf"
  echo "listen_addresses = '*'" >>"$PGDATA/postgresql.conf"
  # a server on the socket only, as the official entrypoint runs for its init scripts
  pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start
  if [ "$db" != postgres ]; then
    echo 'CREATE DATABASE :"db";' | psql -v ON_ERROR_STOP=1 -q --username="$user" --dbname=postgres --set=db="$db"
  fi
  pg_ctl -D "$PGDATA" -m fast -w stop
  echo "postgres-entrypoint: initialised $PGDATA (user $user, database $db)"
fi
exec "$@"
