#!/bin/sh
# The worker image's entrypoint. A variable given with `docker run -e` or compose's `environment:` is in
# the environment of the container's PID 1 (tini) for the container's life, where /proc/1/environ shows
# it to root: so PREFLIGHT_TOKEN is moved to a file only root may read (printf is the shell's own: the
# token is on no command line), and tini and the worker start without it (exec env -u: a new
# environment, not this shell's). The worker reads the file (--token-file). Any other command, or a
# worker given its token another way, starts as it was given.
set -eu
if [ "${1:-}" = worker ] && [ -n "${PREFLIGHT_TOKEN:-}" ]; then
  shift
  umask 077
  mkdir -p /run/preflight
  printf '%s\n' "$PREFLIGHT_TOKEN" >/run/preflight/token
  exec env -u PREFLIGHT_TOKEN /usr/bin/tini -- preflight worker --token-file /run/preflight/token "$@"
fi
exec /usr/bin/tini -- preflight "$@"
