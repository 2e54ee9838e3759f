# syntax=docker/dockerfile:1
# bidbench seed job: runs THE generator of the local runner (harness/db/generator.py + seed.py) with the
# same (scale, seed), so a containerized database holds the same rows and the same checksum as the
# embedded one. It is one-shot: it exits 0 after printing the checksum.
# Build context: the repository root (docker build -f infra/docker/seed.Dockerfile .).
#
# Usage: BIDBENCH_DATABASE_URL=postgresql://USER:PASSWORD@HOST:5432/postgres (a role with CREATEDB),
# arguments as for `./bidbench db seed`, e.g. `db seed --scale 1 --seed 42` (the default command).
# The entrypoint (infra/docker/seed/seed.py) calls the harness's seeding modules directly, without the
# rest of the CLI, which would pull in the whole statistics stack.
FROM python:3.11.11-slim-bookworm

RUN groupadd --system --gid 10001 bidbench \
    && useradd --system --uid 10001 --gid bidbench --home-dir /opt/bidbench --no-create-home \
       --shell /usr/sbin/nologin bidbench
WORKDIR /opt/bidbench

# Only what the seeding modules import, at the versions of requirements.lock (used as a constraints file,
# so every transitive dependency gets the locked version too). tests/infra checks this list against the
# modules the entrypoint really loads.
COPY requirements.lock ./
RUN pip install --no-cache-dir --disable-pip-version-check --constraint requirements.lock \
        rich psutil psycopg psycopg-binary

# The harness from this checkout, run from its source tree: harness/paths.py finds contract/schema.sql
# relative to the package, exactly as in a clone.
COPY pyproject.toml ./
COPY harness ./harness
COPY contract/schema.sql ./contract/schema.sql
COPY infra/docker/seed/seed.py /usr/local/bin/bidbench-seed

ENV BIDBENCH_ROOT=/opt/bidbench \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    BIDBENCH_STATE=/tmp/bidbench-state \
    BIDBENCH_RESULTS=/tmp/bidbench-results

USER 10001:10001
ENTRYPOINT ["python", "/usr/local/bin/bidbench-seed"]
CMD ["db", "seed", "--scale", "1", "--seed", "42"]
