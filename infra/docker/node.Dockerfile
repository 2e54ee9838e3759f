# syntax=docker/dockerfile:1
# bidbench Node.js app: one node process (or a node:cluster primary with NODE_WORKERS workers) = one
# instance (docs/design.md §4). Build context: the repository root (docker build -f infra/docker/node.Dockerfile .).

# ---- build: `npm ci` as in `./bidbench build`, with the toolchain pg-native (libpq) needs ----
FROM node:20.18.3-bookworm-slim AS build
RUN apt-get update \
    && apt-get install -y --no-install-recommends python3 make g++ libpq-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY node-app/package.json node-app/package-lock.json node-app/.npmrc ./
# Production dependencies only; optional ones (pg-native) included, so PG_NATIVE=1 works in the image.
RUN npm ci --omit=dev --no-audit --no-fund
COPY node-app/src ./src

# ---- runtime: node, libpq for pg-native, curl for the health check ----
FROM node:20.18.3-bookworm-slim
RUN apt-get update \
    && apt-get install -y --no-install-recommends libpq5 curl \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY --from=build --chown=root:root /app /app

ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    DB_POOL_SIZE=10 \
    NODE_WORKERS=0 \
    PG_NATIVE=0 \
    LOG_LEVEL=info \
    SERVER_TIMING=1

# The base image's unprivileged user (uid 1000).
USER node
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=3s --start-period=30s --start-interval=2s --retries=3 \
    CMD curl -fsS -o /dev/null "http://127.0.0.1:${PORT}/ready" || exit 1
# node is PID 1 and handles SIGTERM itself (graceful drain, exit 0). The young generation is fixed at the
# size V8 would grow it to, as the local runner starts it (harness/apps/node.py, NODE_FLAGS).
CMD ["node", "--min-semi-space-size=16", "--max-semi-space-size=16", "src/main.js"]
