#!/usr/bin/env bash
# A Docker engine for the container tests.
#   engine.sh start   prints the DOCKER_HOST to use: the engine that answers (DOCKER_HOST, else the
#                     default socket), else a dockerd it starts — as root, on a socket of its own, with
#                     its images under $PREFLIGHT_CI_CACHE/docker (default /var/cache/preflight-ci), which
#                     survive between runs; exits 1, saying why on stderr, when there is none to be had.
#   engine.sh stop    stops the dockerd that `start` started, and nothing else, after removing its untagged
#                     images older than a week (old builds; what a build still reuses comes back).
set -euo pipefail
cache=${PREFLIGHT_CI_CACHE:-/var/cache/preflight-ci}
run=/run/preflight-ci
sock=unix://$run/docker.sock
pidfile=$run/dockerd.pid
# present while a dockerd that `start` started runs: `stop` stops only that one
owned=$run/started-by-engine-sh
why() { echo "engine: $*" >&2; }
answers() { DOCKER_HOST=$1 timeout 10 docker version --format '{{.Server.Version}}' >/dev/null 2>&1; }

start() {
  command -v docker >/dev/null || { why "no docker CLI"; return 1; }
  for host in ${DOCKER_HOST:-} unix:///var/run/docker.sock "$sock"; do
    if answers "$host"; then echo "$host"; return 0; fi
  done
  command -v dockerd >/dev/null || { why "no engine answers and dockerd is not installed"; return 1; }
  [[ $(id -u) == 0 ]] || { why "no engine answers, and only root may start dockerd"; return 1; }
  mkdir -p "$run" "$cache/docker"
  # Its own socket, exec root and pidfile: a system dockerd, started later, is not disturbed.
  dockerd --data-root "$cache/docker" --exec-root "$run/exec" --pidfile "$pidfile" -H "$sock" \
    >"$run/dockerd.log" 2>&1 &
  for _ in $(seq 1 60); do
    if answers "$sock"; then
      touch "$owned"
      echo "$sock"
      return 0
    fi
    kill -0 $! 2>/dev/null || break
    sleep 0.5
  done
  why "dockerd did not start; its log ($run/dockerd.log) ends:"
  tail -n 20 "$run/dockerd.log" >&2
  return 1
}

stop() {
  [[ -f $owned && -f $pidfile ]] || return 0
  rm -f "$owned"
  DOCKER_HOST=$sock docker image prune -f --filter until=168h >/dev/null || true
  local pid
  pid=$(cat "$pidfile")
  kill "$pid" 2>/dev/null || return 0
  # dockerd stops its containers (10 s each at most) and then containerd
  for _ in $(seq 1 60); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.5
  done
  why "dockerd $pid still runs after 30 s"
  return 1
}

case ${1:-} in
start) start ;;
stop) stop ;;
*)
  echo "usage: $0 start|stop" >&2
  exit 2
  ;;
esac
