# syntax=docker/dockerfile:1
# One image, two targets: `coordinator` (default, with a HEALTHCHECK) and `worker`.
# Build: docker build -t preflight .            (coordinator)
#        docker build -t preflight-worker --target worker .

ARG NODE_IMAGE=node:24-bookworm-slim

# --- build: compile TypeScript with the dev dependencies -------------------------------------------
FROM ${NODE_IMAGE} AS build
# gcc: --observe's tracer, native/trace.c, which `npm run build` compiles into dist/preflight-trace
RUN apt-get update \
 && apt-get install -y --no-install-recommends gcc libc6-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json tsconfig.types.json ./
COPY src ./src
COPY worker ./worker
COPY native ./native
COPY scripts/build-assets.mjs scripts/bundle-cli.ts scripts/build-native.mjs ./scripts/
RUN npm run build && test -x dist/preflight-trace

# --- runtime: production dependencies, compiled code, migrations, git ------------------------------
FROM ${NODE_IMAGE} AS runtime
# git: the worker clones workspaces and runs the git checks; tini: a real PID 1 that forwards SIGTERM;
# strace: --observe's tracer where preflight-trace (dist/) may not run (docs/attribution.md).
RUN apt-get update \
 && apt-get install -y --no-install-recommends git ca-certificates tini strace \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY bin ./bin
COPY migrations ./migrations
RUN ln -s /app/bin/preflight.js /usr/local/bin/preflight
# Non-root by default: the image's `node` user (uid 1000).
RUN mkdir -p /app/.preflight && chown node:node /app/.preflight
USER node
ENTRYPOINT ["/usr/bin/tini", "--", "preflight"]

# The worker runs as root so that setup and agents never do: slot i runs them as uid/gid 100000+i
# (--agent-uid), which cannot read the worker's token or files. Run it with every capability dropped
# but CHOWN, DAC_OVERRIDE, FOWNER, KILL, SETUID and SETGID (compose.yaml does). /work is root's, 0711:
# agents pass through to their own workspace and cannot list or write the rest.
# PREFLIGHT_TOKEN is moved to a root-only file before tini starts (bin/worker-entrypoint.sh): no
# process of the container keeps it in its environment.
FROM runtime AS worker
USER root
RUN mkdir -p /work && chmod 0711 /work
ENV PREFLIGHT_WORKDIR=/work
ENTRYPOINT ["/app/bin/worker-entrypoint.sh"]
CMD ["worker", "--workdir", "/work", "--agent-uid", "100000"]

# The port is PREFLIGHT_PORT's (`docker run -e PREFLIGHT_PORT=9000`, compose.yaml), and so is the one the
# HEALTHCHECK asks: set the port with it, not with --port.
FROM runtime AS coordinator
ENV PREFLIGHT_PORT=8080
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PREFLIGHT_PORT || 8080}/healthz`).then(r => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["coordinator"]
