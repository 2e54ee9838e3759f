# syntax=docker/dockerfile:1
# bidbench PHP app: one nginx + PHP-FPM pair = one instance (docs/design.md §4), in one container.
# Build context: the repository root (docker build -f infra/docker/php.Dockerfile .).
#
# Debian's own PHP 8.2 and nginx packages, as `./bidbench setup` installs them on a host: the same
# shared extensions (php.ini loads only opcache, pdo, pdo_pgsql, mbstring) and the same nginx build.
# The configuration is rendered at start by the harness's PHP driver from php-app/conf/*.tmpl, exactly
# as for a local instance (infra/docker/php/instance.py).

# ---- build: lint every PHP file, as `./bidbench build` does ----
FROM debian:12.11-slim AS build
RUN apt-get update \
    && apt-get install -y --no-install-recommends php8.2-cli \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /opt/bidbench/php-app
COPY php-app/ ./
RUN find . -name '*.php' -print0 | xargs -0 -n 1 php -l > /dev/null

# ---- runtime ----
FROM debian:12.11-slim
# python3 + rich: only to render the configuration at start (the process then becomes bash).
RUN apt-get update \
    && apt-get install -y --no-install-recommends \
       php8.2-cli php8.2-fpm php8.2-pgsql php8.2-opcache php8.2-mbstring nginx-light \
       python3 python3-rich curl ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && groupadd --system --gid 10001 bidbench \
    && useradd --system --uid 10001 --gid bidbench --home-dir /tmp --no-create-home --shell /usr/sbin/nologin bidbench
WORKDIR /opt/bidbench
COPY pyproject.toml ./
COPY harness ./harness
COPY --from=build /opt/bidbench/php-app ./php-app
COPY infra/docker/php/instance.py /usr/local/bin/bidbench-php-instance

# PHP_FPM_CHILDREN is left unset on purpose: without it the driver's own rule applies (children =
# DB_POOL_SIZE, one persistent connection per child, php-app/README.md). Compose and Kubernetes set it
# explicitly, with the local runner's default.
ENV HOST=0.0.0.0 \
    PORT=8080 \
    DB_POOL_SIZE=10 \
    PHP_JIT=0 \
    LOG_LEVEL=info \
    SERVER_TIMING=1 \
    BIDBENCH_ROOT=/opt/bidbench \
    BIDBENCH_RUN_DIR=/tmp/bidbench-php \
    BIDBENCH_STATE=/tmp/bidbench-state \
    PYTHONDONTWRITEBYTECODE=1

USER 10001:10001
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=3s --start-period=30s --start-interval=2s --retries=3 \
    CMD curl -fsS -o /dev/null "http://127.0.0.1:${PORT}/ready" || exit 1
# Renders the instance, then becomes a bash supervisor of PHP-FPM and nginx (SIGTERM -> graceful SIGQUIT).
ENTRYPOINT ["python3", "/usr/local/bin/bidbench-php-instance"]
