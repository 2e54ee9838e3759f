# syntax=docker/dockerfile:1
# bidbench load generator: the bidbench-load driver (loadgen/, a Go module), the same program that
# `./bidbench` builds into .bidbench/bin/bidbench-load, so a container or a Kubernetes shard measures
# exactly as the local runner does. Configured only by its BB_* environment (loadgen/README.md).
# Build context: the repository root (docker build -f infra/docker/loadgen.Dockerfile .).

# ---- build: a static binary (no cgo), with the toolchain of the local build ----
FROM golang:1.26.8-bookworm AS build
WORKDIR /src
# The module's dependencies first, in their own layer: a change to the driver's code does not fetch them
# again.
COPY loadgen/go.mod loadgen/go.sum ./
RUN go mod download
COPY loadgen/ ./
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/bidbench-load ./cmd/bidbench-load

# ---- runtime: the binary alone (the Debian release of the PHP image, so one base is pulled) ----
FROM debian:12.11-slim
COPY --from=build /out/bidbench-load /bidbench-load
USER 10001:10001
# `run` measures (summary JSON on stdout, or at BB_SUMMARY); `merge -o OUT IN...` merges shard summaries.
ENTRYPOINT ["/bidbench-load"]
CMD ["run"]
