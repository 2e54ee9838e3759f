"""The evidence behind docs/replication/REPORT.md, committed beside it (results/ is not in the repository).

docs/replication/evidence/evidence.tar.gz holds every verdict the report shows (with the per-fresh-start
values it used) and, per result folder those verdicts cite, its records: manifest, metrics, verdict, load
summary and side-by-side record; no logs, no time series. SHA256SUMS beside it lists the archive and every
member. `./bidbench replicate --from-evidence` checks every checksum, recomputes every verdict from the
folders' records (harness/claims/runner.py from_folders, as `--from` does), checks the values against the
ones the verdict stored; the report (harness/analysis/claims_report.py `from_evidence`) is then written
from them alone: on a fresh clone, in seconds.

A checksum that does not match, a member missing or not listed, or a cited folder absent is refused with
the file's name: a verdict is never computed from part of the evidence. The archive's bytes depend only on
its content (fixed order, times and owners), so an unchanged report leaves it unchanged in git.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import tarfile
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness import paths
from harness.claims.model import Claim, LadderShape, Size
from harness.claims.runner import from_folders, judge_claim
from harness.claims.store import as_asked, verdict_file_name, verdict_record, verdicts_dir
from harness.record.folders import finite

DIRECTORY = paths.REPLICATION_EVIDENCE
ARCHIVE = "evidence.tar.gz"
CHECKSUMS = "SHA256SUMS"
FOLDER_RECORDS = ("manifest.json", "metrics.json", "verdict.json", "load-summary.json", "side-by-side.json")
"""A result folder's records that a verdict or the report reads; its logs and time series stay out."""
REPORT_GIT = "report-git.json"


class EvidenceError(Exception):
    """Evidence that cannot be trusted or is incomplete; the message names the file."""


@dataclass
class Recomputed:
    records: list[dict[str, Any]]
    differences: list[str]
    """Verdicts whose recomputed label differs from the stored one (a changed claim or statistics)."""
    folders: Path
    """The cited folders' records, unpacked while `recomputed` is open: the report reads its machine section
    from them."""
    report_git: dict[str, Any]
    report: str = ""
    """The report written from the records (harness/analysis/claims_report.py `from_evidence`)."""


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _strip(record: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in record.items() if not k.startswith("_")}


def members(
    records: Sequence[dict[str, Any]], results_dir: Path, report_git: dict[str, Any]
) -> dict[str, bytes]:
    """Every member of the evidence by its path in the archive. Raises EvidenceError naming the cited
    folders that are not under results_dir (the evidence would be partial)."""
    out: dict[str, bytes] = {REPORT_GIT: (json.dumps(report_git, sort_keys=True, indent=2) + "\n").encode()}
    missing = []
    for record in records:
        name = f"verdicts/{verdict_file_name(record)}"
        out[name] = (json.dumps(_strip(record), indent=2, sort_keys=True) + "\n").encode()
        for run_id in record.get("runs", []):
            folder = results_dir / str(run_id)
            if not (folder / "manifest.json").is_file():
                missing.append(str(run_id))
                continue
            for file in FOLDER_RECORDS:
                if (folder / file).is_file():
                    out[f"runs/{run_id}/{file}"] = (folder / file).read_bytes()
    if missing:
        raise EvidenceError(
            f"no result folder under {results_dir} for {len(missing)} cited run(s): {', '.join(sorted(set(missing)))}"
        )
    return out


def archive_bytes(content: dict[str, bytes]) -> bytes:
    """A gzipped tar of `content`, the same bytes for the same content."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name in sorted(content):
            info = tarfile.TarInfo(name)
            info.size, info.mtime, info.mode = len(content[name]), 0, 0o644
            tar.addfile(info, io.BytesIO(content[name]))
    packed = io.BytesIO()
    with gzip.GzipFile(fileobj=packed, mode="wb", mtime=0, compresslevel=9) as gz:
        gz.write(raw.getvalue())
    return packed.getvalue()


def write(content: dict[str, bytes], directory: Path = DIRECTORY) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    data = archive_bytes(content)
    (directory / ARCHIVE).write_bytes(data)
    sums = [f"{_sha256(data)}  {ARCHIVE}"] + [
        f"{_sha256(content[n])}  {ARCHIVE}:{n}" for n in sorted(content)
    ]
    (directory / CHECKSUMS).write_text("\n".join(sums) + "\n", encoding="utf-8")
    return directory / ARCHIVE


def read(directory: Path = DIRECTORY) -> dict[str, bytes]:
    """Every member, after every checksum matched and every listed member is there and no other."""
    archive, sums = directory / ARCHIVE, directory / CHECKSUMS
    for path in (archive, sums):
        if not path.is_file():
            raise EvidenceError(f"no evidence: {path} is missing")
    listed: dict[str, str] = {}
    for line in sums.read_text(encoding="utf-8").splitlines():
        digest, _, name = line.partition("  ")
        if not name:
            raise EvidenceError(f"{sums}: not a checksum line: {line!r}")
        listed[name] = digest
    try:
        with tarfile.open(archive, mode="r:gz") as tar:
            content = {
                m.name: tar.extractfile(m).read()  # type: ignore[union-attr]
                for m in tar.getmembers()
                if m.isfile()
            }
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise EvidenceError(f"{archive}: not a readable archive ({exc})") from exc
    wrong = [
        f"{ARCHIVE}:{n}"
        for n in sorted(content)
        if listed.get(f"{ARCHIVE}:{n}") not in (None, _sha256(content[n]))
    ]
    if wrong:
        raise EvidenceError(
            f"checksum mismatch (SHA-256, {sums}): {', '.join(wrong)}; nothing was recomputed"
        )
    absent = [n for n in listed if n != ARCHIVE and n.removeprefix(f"{ARCHIVE}:") not in content]
    unlisted = [f"{ARCHIVE}:{n}" for n in sorted(content) if f"{ARCHIVE}:{n}" not in listed]
    parts = [f"listed in {CHECKSUMS} but not in the archive: {', '.join(absent)}"] if absent else []
    parts += [f"in the archive but not in {CHECKSUMS}: {', '.join(unlisted)}"] if unlisted else []
    if parts:
        raise EvidenceError("incomplete evidence, nothing was recomputed: " + "; ".join(parts))
    if listed.get(ARCHIVE) != _sha256(archive.read_bytes()):
        raise EvidenceError(f"checksum mismatch (SHA-256, {sums}): {archive}; nothing was recomputed")
    return content


def restore(results_dir: Path, directory: Path = DIRECTORY) -> tuple[int, int]:
    """Put the evidence's verdicts and folder records that results_dir lacks into it: (verdicts, folders).

    results/ is not in the repository, so on a fresh clone a report written from results/ alone would drop
    every verdict the committed one shows. Restored, they are extended instead: a new verdict joins them,
    a second replication finds its first. Nothing already there is replaced; no index line is written, so a
    restored folder (records only, no logs) is never reused as a stored fresh start. No evidence: (0, 0).
    Evidence that cannot be trusted raises EvidenceError, and nothing is restored."""
    if not (directory / ARCHIVE).is_file():
        return 0, 0
    content = read(directory)
    cited = {name.split("/")[1] for name in content if name.startswith("runs/")}
    absent = {run_id for run_id in cited if not (results_dir / run_id / "manifest.json").is_file()}
    verdicts = 0
    for name, data in sorted(content.items()):
        kind, _, rest = name.partition("/")
        if kind == "verdicts":
            path = verdicts_dir(results_dir) / rest
            verdicts += not path.exists()
        elif kind == "runs" and rest.split("/")[0] in absent:
            path = results_dir / rest
        else:
            continue
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
    return verdicts, len(absent)


def _size(settings: dict[str, Any]) -> Size:
    values = dict(settings)
    values["ladder"] = LadderShape(**values.get("ladder", {}))
    if values.get("impls") is not None:
        values["impls"] = tuple(values["impls"])
    return Size(**values)


def _observed(record: dict[str, Any]) -> dict[tuple[str, str], list[dict[str, Any]]]:
    return {(o["impl"], o["variant"]): o["runs"] for o in record.get("observations", [])}


def _comparable(observations: dict[tuple[str, str], list[dict[str, Any]]]) -> dict[Any, Any]:
    def value(v: Any) -> Any:
        return round(v, 9) if isinstance(v, float) else v

    return {
        f"{impl}/{variant}": [
            (r.get("run"), r.get("valid"), value(r.get("value")), r.get("block")) for r in runs
        ]
        for (impl, variant), runs in observations.items()
    }


@contextmanager
def recomputed(claims: Sequence[Claim], content: dict[str, bytes]) -> Iterator[Recomputed]:
    """Every verdict of the evidence recomputed from its folders' records, which stay unpacked while the
    caller (the report, a floor above) reads them."""
    by_id = {c.id: c for c in claims}
    stored = sorted(
        (json.loads(content[n]) for n in content if n.startswith("verdicts/")),
        key=lambda r: str(r.get("created_utc", "")),
    )
    report_git = json.loads(content[REPORT_GIT])
    records, differences = [], []
    with tempfile.TemporaryDirectory(prefix="bidbench-evidence-") as tmp:
        root = Path(tmp)
        for name, data in content.items():
            if name.startswith("runs/"):
                path = root / name.removeprefix("runs/")
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)
        for record in stored:
            claim = by_id.get(record["claim_id"])
            if claim is None:
                raise EvidenceError(f"verdicts/{record['claim_id']}: no such claim in claims/")
            absent = missing_folders(record, root)
            if absent:
                raise EvidenceError(
                    f"{claim.id}: the evidence lacks the records of {', '.join(absent)}; nothing was recomputed"
                )
            again = rejudged(claim, record, root)
            if again["outcome"] != record["outcome"]:
                differences.append(f"{claim.id}: stored {record['outcome']}, recomputed {again['outcome']}")
            records.append(again)
        yield Recomputed(records, differences, root, report_git)


def missing_folders(record: dict[str, Any], root: Path) -> list[str]:
    """The result folders a stored verdict cites that have no records under `root`."""
    return [str(r) for r in record.get("runs", []) if not (root / str(r) / "manifest.json").is_file()]


def rejudged(claim: Claim, record: dict[str, Any], root: Path) -> dict[str, Any]:
    """A stored verdict judged again by today's code from its folders' records under `root` (every one
    present: `missing_folders`), keeping its time; one stored with the previous statistics is kept as
    stored (the report marks it so)."""
    runs = [str(r) for r in record.get("runs", [])]
    if record.get("method") is None:
        return record
    try:
        size, quick, observations = from_folders(claim, [root / r for r in runs])
    except ValueError as exc:
        raise EvidenceError(f"{claim.id}: {exc}") from exc
    size = _size(record["settings"]) if record.get("settings") else size
    # the folders cannot always tell the sizes apart (side-by-side fresh starts share a group key)
    quick = record.get("size", "quick" if quick else "full") != "full"
    stored = _observed(record)
    if _comparable(observations) != _comparable(stored):
        raise EvidenceError(
            f"{claim.id}: the values recomputed from the folders' records differ from the values the "
            f"stored verdict used (verdicts/{verdict_file_name(record)})"
        )
    # That a ladder was run again because the host disturbed it is known to the run, not to its folder.
    observations = {
        key: [
            {**r, **({"run_again": True} if s.get("run_again") else {})}
            for r, s in zip(seen, stored[key], strict=True)
        ]
        for key, seen in observations.items()
    }
    claim = as_asked(claim, record)
    again = verdict_record(claim, size, quick, judge_claim(claim, size, observations))
    again["created_utc"] = record["created_utc"]
    # as stored: through JSON, non-finite figures as null
    return json.loads(json.dumps(finite(again), allow_nan=False))
