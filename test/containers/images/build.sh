#!/usr/bin/env bash
# Builds the stand-in base images the container tests use, from this machine's package sources only
# (no image registry is ever asked):
#   debian    a Debian bookworm rootfs from `mmdebstrap --variant=minbase`, imported as an image
#   node      stand-in for node:24-bookworm-slim: debian + Node and npm from the npm registry (pinned in
#             node/package-lock.json), a `node` user 1000:1000, the official image's layout
#   postgres  stand-in for postgres:17-bookworm: debian + Debian's postgresql, with an entrypoint that
#             honours POSTGRES_USER, POSTGRES_PASSWORD and POSTGRES_DB like the official one
# The node image carries this machine's npm registry setting and the CA bundle npm trusts here, so that
# `npm ci` inside the project's Dockerfile works behind the same registry as the host.
# An image whose tag exists is reused, not rebuilt.
# Prints NODE_IMAGE=…, POSTGRES_IMAGE=… and DEBIAN_IMAGE=… on stdout; progress goes to stderr.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
log() { echo "images: $*" >&2; }

registry=$(npm config get registry)
cafile=$(npm config get cafile)
[[ -f $cafile ]] || cafile=/etc/ssl/certs/ca-certificates.crt
sources=()
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
  [[ -s $f ]] && sources+=("$f")
done
((${#sources[@]})) || { echo "images: no apt sources on this machine" >&2; exit 1; }

# Each tag is a hash of what the image is made of (this script included); the debian one is in the others'.
digest() { sha256sum | cut -c1-12; }
debian=preflight-ci/debian:bookworm-$( { sha256sum <"$here/build.sh"; cat "${sources[@]}"; } | digest)
node=preflight-ci/node:24-bookworm-slim-$(
  {
    echo "$debian registry=$registry"
    (cd "$here" && sha256sum node.Dockerfile node/package-lock.json)
    [[ -f $cafile ]] && sha256sum <"$cafile"
  } | digest
)
postgres=preflight-ci/postgres:15-bookworm-$(
  {
    echo "$debian"
    (cd "$here" && sha256sum postgres.Dockerfile postgres-entrypoint.sh)
  } | digest
)

exists() { docker image inspect "$1" >/dev/null 2>&1; }
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

if ! exists "$debian"; then
  log "building $debian (mmdebstrap)"
  # the official slim images leave out manuals, docs (but copyright) and translations the same way
  mmdebstrap --variant=minbase --quiet \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/info/*' \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --dpkgopt='path-exclude=/usr/share/locale/*' \
    bookworm "$scratch/rootfs.tar" "${sources[@]}"
  docker import --change 'CMD ["bash"]' "$scratch/rootfs.tar" "$debian" >/dev/null
  rm -f "$scratch/rootfs.tar"
fi

if ! exists "$node"; then
  log "building $node"
  ctx=$scratch/node
  mkdir -p "$ctx"
  cp "$here/node/package.json" "$here/node/package-lock.json" "$here/node.Dockerfile" "$ctx/"
  npm ci --prefix "$ctx" --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null
  printf 'registry=%s\n' "$registry" >"$ctx/npmrc"
  if [[ -f $cafile ]]; then
    cp "$cafile" "$ctx/ca.pem"
    echo 'cafile=/usr/local/etc/npm-ca.pem' >>"$ctx/npmrc"
  else
    : >"$ctx/ca.pem"
  fi
  docker build --quiet --build-arg "BASE=$debian" -f "$ctx/node.Dockerfile" -t "$node" "$ctx" >/dev/null
fi

if ! exists "$postgres"; then
  log "building $postgres"
  docker build --quiet --build-arg "BASE=$debian" -f "$here/postgres.Dockerfile" -t "$postgres" "$here" >/dev/null
fi

# Images of earlier inputs are of no further use.
docker image ls --format '{{.Repository}}:{{.Tag}}' | grep -E '^preflight-ci/(debian|node|postgres):' |
  grep -v -x -e "$debian" -e "$node" -e "$postgres" | xargs -r docker image rm >/dev/null || true

echo "DEBIAN_IMAGE=$debian"
echo "NODE_IMAGE=$node"
echo "POSTGRES_IMAGE=$postgres"
