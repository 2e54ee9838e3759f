# syntax=docker/dockerfile:1
# bidbench Java app: one JVM = one instance (docs/design.md §4). Build context: the repository root
# (docker build -f infra/docker/java.Dockerfile .). java.Dockerfile.dockerignore keeps the context small.

# ---- build: the same command as `./bidbench build` (Maven, runnable shaded jar in java-app/target/) ----
FROM maven:3.9.9-eclipse-temurin-17 AS build
WORKDIR /src/java-app
COPY java-app/pom.xml ./
# Resolve dependencies and plugins in their own layer, so a source change does not download them again.
RUN mvn -B -q dependency:resolve-plugins dependency:resolve || true
COPY java-app/src ./src
RUN mvn -B package -DskipTests \
    && mkdir -p /out \
    && jar="$(ls target/*.jar | grep -v '/original-' | head -n 1)" \
    && test -n "$jar" \
    && cp "$jar" /out/app.jar

# ---- runtime: a JRE only ----
FROM eclipse-temurin:17.0.15_6-jre-noble
# curl for the health check (one cheap process per check, inside the instance's own CPU limit).
RUN apt-get update \
    && apt-get install -y --no-install-recommends curl \
    && rm -rf /var/lib/apt/lists/* \
    && groupadd --system --gid 10001 bidbench \
    && useradd --system --uid 10001 --gid bidbench --home-dir /app --no-create-home --shell /usr/sbin/nologin bidbench
WORKDIR /app
COPY --from=build /out/app.jar /app/app.jar

# The contract's configuration (contract/README.md) with the local runner's defaults (harness/apps/knobs.py).
# JAVA_OPTS: the heap and collector the local runner fixes (harness/apps/java.py, JVM_FLAGS).
# HOST is 0.0.0.0 here: a container must accept connections from outside itself.
ENV HOST=0.0.0.0 \
    PORT=8080 \
    DB_POOL_SIZE=10 \
    JAVA_THREADS=32 \
    JAVA_POOL=hikari \
    LOG_LEVEL=info \
    SERVER_TIMING=1 \
    JAVA_OPTS="-Xms256m -Xmx256m -XX:+UseG1GC -XX:+ExitOnOutOfMemoryError"

USER 10001:10001
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=3s --start-period=60s --start-interval=2s --retries=3 \
    CMD curl -fsS -o /dev/null "http://127.0.0.1:${PORT}/ready" || exit 1
# exec: the JVM is PID 1 and gets SIGTERM itself (graceful drain, exit 0).
ENTRYPOINT ["/bin/sh", "-c", "exec java $JAVA_OPTS -jar /app/app.jar \"$@\"", "java"]
