# syntax=docker/dockerfile:1
# bidbench PostgreSQL: the stock image with THE settings file of the embedded database
# (infra/postgres/postgresql.conf, docs/design.md §3.5). Build context: the repository root.
# Two settings differ inside a container, and only by command-line overrides, never by editing the file:
#   listen_addresses=*          the apps and the seed job connect over the container network;
#   unix_socket_directories=... the image's entrypoint initializes the cluster over a local socket,
#                               which the file turns off ('') for the embedded database.
FROM postgres:15.10-bookworm
COPY infra/postgres/postgresql.conf /etc/postgresql/postgresql.conf

ENV POSTGRES_USER=bidbench \
    POSTGRES_DB=postgres \
    PGDATA=/var/lib/postgresql/data/pgdata

# The image's own unprivileged user (uid 999): its entrypoint supports running as that user directly.
USER postgres
EXPOSE 5432
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s --start-interval=1s --retries=5 \
    CMD pg_isready -q -h 127.0.0.1 -p 5432 -U "$POSTGRES_USER" -d postgres || exit 1
CMD ["postgres", \
     "-c", "config_file=/etc/postgresql/postgresql.conf", \
     "-c", "listen_addresses=*", \
     "-c", "unix_socket_directories=/var/run/postgresql"]
