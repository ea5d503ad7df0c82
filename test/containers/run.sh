#!/usr/bin/env bash
# `npm run test:containers`: the tests in test/containers/, which build and run the project's images.
#   engine   engine.sh start: the one that answers, else a dockerd started for this run, stopped after
#   images   NODE_IMAGE and POSTGRES_IMAGE when both are set (say the official node:24-bookworm-slim and
#            postgres:17-bookworm, where they may be pulled), else the stand-ins images/build.sh builds
# Without an engine or a way to make the images it says so and skips (exit 0). Arguments go to vitest.
set -euo pipefail
cd "$(dirname "$0")/../.."
skip() {
  echo "test:containers: SKIPPED, no container test ran: $*" >&2
  exit 0
}

host=$(test/containers/engine.sh start) || skip "no Docker engine to be had (see above)"
export DOCKER_HOST=$host
export PREFLIGHT_CI_RUN=${PREFLIGHT_CI_RUN:-$$-$(date +%s)}
cleanup() {
  # what a crashed run left behind: the containers it labelled
  docker ps -aq --filter "label=preflight-ci.run=$PREFLIGHT_CI_RUN" | xargs -r docker rm -f -v >/dev/null || true
  test/containers/engine.sh stop
}
trap cleanup EXIT
echo "test:containers: engine $(docker version --format '{{.Server.Version}}') at $DOCKER_HOST" >&2

if [[ -z ${NODE_IMAGE:-} || -z ${POSTGRES_IMAGE:-} ]]; then
  command -v mmdebstrap >/dev/null ||
    skip 'mmdebstrap is not installed (apt-get install mmdebstrap) and NODE_IMAGE, POSTGRES_IMAGE are not both set'
  started=$SECONDS
  while IFS='=' read -r name value; do
    [[ $name == *_IMAGE ]] && export "$name=$value"
  done < <(test/containers/images/build.sh)
  echo "test:containers: stand-in images ready in $((SECONDS - started)) s: $NODE_IMAGE, $POSTGRES_IMAGE" >&2
fi
# Ryuk, testcontainers' reaper, is an image from a registry: the tests stop their own containers instead.
export TESTCONTAINERS_RYUK_DISABLED=true
node_modules/.bin/vitest run --config test/containers/vitest.config.ts "$@"
