"""The conformance and parity suite (docs/design.md §3): proof that the three apps do identical work.

Modules, one job each:

| module | job |
| --- | --- |
| `client` | raw HTTP/1.1 over sockets (invalid UTF-8, chunked bodies, HEAD, any method) |
| `cases` | loading the golden cases of `contract/conformance/*.yaml` |
| `canon` | canonical JSON, matchers, structural diffs, the wire checks every response gets |
| `dbstate` | the suite's private database: reset, fingerprint, invariants, pg_stat_statements |
| `targets` | an implementation under test (a real app, or a test fixture) started on the private database |
| `golden`, `differential`, `dbwork`, `concurrency`, `schemathesis_check` | the five parts |
| `report` | the rich table and the JSON report |
| `runner` | `run_conformance` and `conformance_exit_code` |
"""
