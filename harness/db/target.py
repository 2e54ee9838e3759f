"""Which PostgreSQL server bidbench uses: its own embedded cluster, or an existing one.

Set BIDBENCH_DATABASE_URL=postgresql://user:pass@host:port/anydb to use an existing server. bidbench then
creates its two databases there (the user needs CREATEDB) and never starts or stops that server.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

from harness.db.cluster import EmbeddedCluster

WORKING_DB = "bidbench"
TEMPLATE_DB = "bidbench_template"


@dataclass(frozen=True)
class DatabaseServer:
    base_url: str
    embedded: bool

    def url(self, dbname: str = WORKING_DB) -> str:
        parts = urlsplit(self.base_url)
        return urlunsplit((parts.scheme, parts.netloc, "/" + dbname, parts.query, ""))

    def admin_url(self) -> str:
        return self.url("postgres")

    @property
    def host_port(self) -> tuple[str, int]:
        parts = urlsplit(self.base_url)
        return parts.hostname or "127.0.0.1", parts.port or 5432


def external_url() -> str | None:
    return os.environ.get("BIDBENCH_DATABASE_URL") or None


def current_server() -> DatabaseServer:
    url = external_url()
    if url:
        return DatabaseServer(base_url=url, embedded=False)
    return DatabaseServer(base_url=EmbeddedCluster().url(), embedded=True)


def mask_password(url: str) -> str:
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
