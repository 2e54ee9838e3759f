"""`./bidbench replicate`: list the claims of docs/design.md §10, run one or all, print verdicts beside the published figures."""

from __future__ import annotations

import re
import time
from contextlib import nullcontext
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Column, Table

from harness import paths
from harness.analysis import claims_report
from harness.analysis.claim_rows import TERMINAL_STYLE, published_text, ratio_of, side_of
from harness.analysis.side_by_side import by_comparison, load_records
from harness.claims import evidence
from harness.claims import verdict as claim_verdict
from harness.claims.ladders import again, ran_again
from harness.claims.layout import preflight
from harness.claims.model import Claim, ClaimError, find, load_all
from harness.claims.runner import estimate, from_folders, judge_claim, replicate, size_for
from harness.claims.store import (
    APART_H,
    judged_before,
    load_verdicts,
    save_verdict,
    too_recent,
    verdict_record,
    verdicts_dir,
)
from harness.cli.compare import main as compare_main
from harness.console import UserError, console

COLOURS = {
    claim_verdict.REPLICATED: "green",
    claim_verdict.DIRECTION_ONLY: "cyan",
    claim_verdict.CONTRADICTED: "red",
    claim_verdict.INCONCLUSIVE: "yellow",
    claim_verdict.NOT_RUNNABLE: "magenta",
    claim_verdict.NOT_TESTABLE: "magenta",
}


def _coloured(outcome: str) -> str:
    return f"[{COLOURS.get(outcome, 'white')}]{outcome}[/]"


def list_table(claims: list[Claim]) -> Table:
    columns = (Column(c, overflow="fold") for c in ("id", "source", "metric", "expected", "runnable"))
    table = Table(*columns, title="claims to replicate (docs/replication/README.md)", show_lines=True)
    for claim in claims:
        runnable = "[green]yes[/]" if claim.runnable else f"[magenta]no[/]: {claim.why_not()}"
        if claim.adaptation:
            runnable += f" (adaptation: {claim.adaptation})"
        table.add_row(claim.id, claim.source_text(), claim.metric, claim.expected_text(), runnable)
    return table


def verdict_table(claim: Claim, verdict: claim_verdict.ClaimVerdict) -> Table:
    columns = ["impl", "expected", "A mean [95 % CI] n", "B mean [95 % CI] n", "B/A [95 % CI]"]
    table = Table(
        *(Column(c, overflow="fold") for c in (*columns, "published", "verdict")),
        title=f"{claim.id}: {_coloured(verdict.outcome)}  ({claim.metric}; {claim.source_text()})",
        show_lines=True,
    )
    for r in verdict.results:
        # a row not testable here ran nothing of its own (harness/claims/model.py `cells`)
        a, b = (
            "-"
            if r.outcome == claim_verdict.NOT_TESTABLE
            else side_of(s.label, s.values, s.invalid, s.unbracketed, TERMINAL_STYLE, s.below)
            for s in (r.a, r.b)
        )
        ratio = ratio_of(
            r.ratio,
            (r.ratio_ci.low, r.ratio_ci.high) if r.ratio_ci else None,
            r.tost.p_value if r.tost else None,
            r.tost.ci90 if r.tost else None,
            r.p_value,
            TERMINAL_STYLE,
            r.paired,
            r.bound,
        )
        published = published_text(asdict(r.comparison), claim.source)
        outcome = _coloured(r.outcome) + (f": {r.reason}" if r.reason else "")
        table.add_row(r.impl, r.comparison.expected_text(), a, b, ratio, published, outcome)
    return table


def print_verdict(claim: Claim, verdict: claim_verdict.ClaimVerdict, pilot: bool) -> None:
    """The verdict's table and notes, and with `pilot` the repetitions a TOST verdict needs."""
    if verdict.outcome in (claim_verdict.NOT_RUNNABLE, claim_verdict.NOT_TESTABLE):
        console.print(f"[magenta]{claim.id}: {verdict.outcome}[/] — {verdict.reason}")
        console.print(f"  published: {claim.source.get('published', '')}")
    else:
        console.print(verdict_table(claim, verdict))
        if claim.adaptation:
            console.print(f"  adaptation: {claim.adaptation}")
        for note in verdict.notes:
            console.print(f"  note: {note}")
    if pilot:
        print_pilot(claim, verdict)


def write_report(verdicts: list[tuple[Claim, claim_verdict.ClaimVerdict]], html: Path | None) -> None:
    """The comparison report over every run behind these verdicts; its Claims section shows the verdicts."""
    run_dirs = sorted(
        {
            str(paths.RESULTS / str(record["run"]))
            for _, verdict in verdicts
            for records in verdict.observations.values()
            for record in records
            if record.get("run") and (paths.RESULTS / str(record["run"])).is_dir()
        }
    )
    if not run_dirs:
        return
    target = html or paths.RESULTS / f"replicate-{datetime.now(UTC).strftime('%Y%m%dT%H%M%SZ')}.html"
    for folders, path in report_files(run_dirs, target):
        if compare_main([*folders, "--html", str(path), "--quiet"]) != 0:
            console.print(f"[yellow]{path} could not be written (see above); the verdicts are stored[/]")


def report_files(run_dirs: list[str], target: Path) -> list[tuple[list[str], Path]]:
    """The HTML files of these runs and the folders each shows. A comparison file holds one side-by-side
    comparison, so runs that are several and nothing else (a claim with a line-up per app) get a file each,
    named after the comparison; any other mix is one file."""
    comparisons = by_comparison(load_records(Path(d) for d in run_dirs))
    side_by_side = {record["folder"] for records in comparisons.values() for record in records}
    if len(comparisons) < 2 or side_by_side != set(run_dirs):
        return [(run_dirs, target)]
    return [
        (
            sorted(record["folder"] for record in records),
            target.with_name(
                f"{target.stem}-{re.sub(r'[^A-Za-z0-9+]+', '-', name).strip('-')}{target.suffix}"
            ),
        )
        for name, records in comparisons.items()
    ]


def print_pilot(claim: Claim, verdict: claim_verdict.ClaimVerdict) -> None:
    """Fresh starts per side for TOST power 0.8 at each equivalence or magnitude band, from these runs'
    spread on the log scale (a pilot)."""
    table = Table(
        *("impl", "expected", "n now (A, B)", "sd of log values", "n per side needed"),
        title=f"{claim.id}: repetitions for an equivalence or magnitude verdict (TOST, power {claim_verdict.POWER:g})",
    )
    for r in verdict.results:
        if r.tost is None:
            continue
        sd, band, paired = r.sd_log or 0.0, r.tost.band, r.paired
        centre = (band[0] * band[1]) ** 0.5
        need = claim_verdict.runs_needed(
            lambda n, s=sd, b=band, c=centre, p=paired: claim_verdict.tost_power_at(n, s, b, c, p)
        )
        table.add_row(
            r.impl,
            r.comparison.expected_text(),
            f"{r.a.n}, {r.b.n}",
            f"{sd:.4f} (CV about {sd * 100:.1f} %)",
            str(need) if need else f"more than {claim_verdict.MAX_N}",
        )
    if table.row_count:
        console.print(table)
        console.print(
            f"  run them with: ./bidbench replicate {claim.id} --repetitions <n> (stored runs are reused)"
        )
    else:
        console.print(f"  {claim.id} has no equivalence or magnitude question: --pilot has nothing to size")


def _folders(texts: list[str]) -> list[Path]:
    out = []
    for part in filter(None, (part.strip() for text in texts for part in text.split(","))):
        path = Path(part) if Path(part).is_dir() else paths.RESULTS / part
        if not path.is_dir():
            raise UserError(
                f"--from: no result folder {part!r} (neither a path nor an id under {paths.RESULTS})"
            )
        out.append(path)
    if not out:
        raise UserError("--from takes result folders (ids under results/ or paths), comma-separated")
    return out


def _recompute(claim: Claim, folders: list[Path], pilot: bool) -> None:
    try:
        size, quick, observations = from_folders(claim, folders)
    except ValueError as exc:
        raise UserError(f"--from: {exc}") from exc
    verdict = judge_claim(claim, size, observations)
    console.print(
        f"{claim.id}: recomputed from {len(folders)} stored folder(s) alone ({'quick' if quick else 'full'} size, "
        f"{size.repetitions} repetition(s)); nothing was run"
    )
    print_verdict(claim, verdict, pilot)


def _from_evidence(claims: list[Claim]) -> None:
    """Every verdict and the report from the evidence alone; the report is rewritten and compared."""
    where, target = evidence.DIRECTORY, claims_report.REPORT
    try:
        result = claims_report.from_evidence(claims, evidence.read(where))
    except evidence.EvidenceError as exc:
        raise UserError(f"--from-evidence: {exc}") from exc
    for record in result.records:
        console.print(f"{record['claim_id']} ({record.get('size')}): {_coloured(record['outcome'])}")
    for line in result.differences:
        console.print(f"[yellow]recomputed label differs from the stored one: {line}[/]")
    before = target.read_text(encoding="utf-8") if target.is_file() else None
    target.write_text(result.report, encoding="utf-8")
    same = "the same as before, byte for byte" if before == result.report else "CHANGED (see git diff)"
    console.print(
        f"{len(result.records)} verdict(s) recomputed from {where} alone; nothing was run. {target}: {same}"
    )


def _run_claims(
    claims: list[Claim],
    chosen: list[Claim],
    quick: bool,
    repetitions: int | None,
    pilot: bool,
    html: Path | None,
) -> None:
    started = time.monotonic()
    counted: set[tuple[str, int]] = set()
    plans = [(c, estimate(c, size_for(c, quick, repetitions), None, counted)) for c in chosen if c.runnable]
    if len(chosen) > 1:
        total = sum(seconds for _, (seconds, _, _) in plans)
        starts = sum(n for _, (_, n, _) in plans)
        console.print(
            f"replicating {len(chosen)} claims ({'quick' if quick else 'full'} size): about {total / 60:.0f} min, "
            f"{starts} fresh starts to run (ladders shared between claims counted once)"
        )
    estimates = {c.id: e for c, e in plans}
    verdicts = []
    for claim in chosen:
        if claim.id in estimates:
            seconds, to_run, done = estimates[claim.id]
            console.rule(
                f"{claim.id}: estimated {seconds / 60:.1f} min ({to_run} fresh starts to run, {done} stored)"
            )
        verdict = replicate(claim, quick, repetitions)
        print_verdict(claim, verdict, pilot)
        verdicts.append((claim, verdict))
        if verdict.outcome not in (claim_verdict.NOT_RUNNABLE, claim_verdict.NOT_TESTABLE):
            record = verdict_record(claim, size_for(claim, quick, repetitions), quick, verdict)
            earlier = judged_before(load_verdicts(verdicts_dir()), record)
            if earlier:
                console.print(
                    f"  not stored: every fresh start it judged was judged by the {earlier.get('size')} size's "
                    f"verdict of {str(earlier.get('created_utc'))[:16].replace('T', ' ')} UTC already, so it "
                    "measured nothing new. --again runs fresh starts of its own; --report judges every stored "
                    "verdict again with this version."
                )
                continue
            console.print(f"  verdict stored in {save_verdict(record)}")
            # after every claim, so an interrupted --all leaves a report with each finished claim
            console.print(f"  report: {claims_report.write(claims)}")
    write_report(verdicts, html)
    if len(verdicts) > 1:
        summary = Table("id", "verdict", title="claims summary")
        for claim, verdict in verdicts:
            summary.add_row(claim.id, _coloured(verdict.outcome))
        console.print(summary)
        redone = sum(ran_again(verdict.observations) for _, verdict in verdicts)
        console.print(
            f"{len(verdicts)} claims in {(time.monotonic() - started) / 60:.0f} min; "
            f"{redone} fresh start(s) the host disturbed ran again"
        )


def _resumed_start(text: str) -> str:
    """The start of the replication to resume, written as the results index writes times; refused unless it
    is a UTC time in the past."""
    try:
        moment = datetime.fromisoformat(text.strip().removesuffix("Z").removesuffix(" UTC"))
    except ValueError:
        raise UserError(
            f"--since {text!r} is not a time: give the one --again printed, e.g. 2026-11-30T13:25:04.123456Z"
        ) from None
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC).replace(tzinfo=None)
    if moment > datetime.now(UTC).replace(tzinfo=None):
        raise UserError(
            f"--since {text!r} lies in the future: give the UTC time the interrupted --again printed"
        )
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _warn_too_recent(chosen: list[Claim], size: str, now: str) -> None:
    """Name the claims whose last verdict of this size rests on a fresh start less than APART_H old: the report
    compares the two replications, and two runs within the hour say less about a host that drifts between
    fresh starts."""
    stored = load_verdicts(verdicts_dir())
    for claim in chosen:
        hours = too_recent(stored, claim.id, size, now)
        if hours is not None:
            console.print(
                f"[yellow]note:[/] the last fresh start of {claim.id}'s {size} verdict began {60 * hours:.0f} "
                "minutes ago; "
                f"its two replications are meant to be at least {APART_H:g} h apart (the report says how far)"
            )


def register(app: typer.Typer) -> None:
    @app.command("replicate")
    def replicate_cmd(
        claim_id: Annotated[
            str | None,
            typer.Argument(
                help="A claim id (see --list), or several, comma-separated, run as one replication."
            ),
        ] = None,
        list_: Annotated[bool, typer.Option("--list", help="List every claim with its status.")] = False,
        all_: Annotated[bool, typer.Option("--all", help="Replicate every runnable claim.")] = False,
        quick: Annotated[
            bool,
            typer.Option("--quick", help="The claims' quick size (--all --quick: under 120 min on 2 cores)."),
        ] = False,
        repetitions: Annotated[
            int | None,
            typer.Option(min=3, help="Repetitions per variant (default: the claim's)."),
        ] = None,
        from_: Annotated[
            list[str] | None,
            typer.Option(
                "--from",
                help="Recompute the claim's verdict from these stored result folders alone (ids or paths, "
                "comma-separated); nothing is run.",
            ),
        ] = None,
        pilot: Annotated[
            bool,
            typer.Option(
                "--pilot",
                help="Also print, per equivalence comparison, the repetitions per side that TOST needs for "
                "power 0.8 at the claim's margin, from the variance of these runs (a pilot).",
            ),
        ] = False,
        report_only: Annotated[
            bool,
            typer.Option(
                "--report",
                help="Only regenerate docs/replication/REPORT.md (and the evidence beside it) from the stored verdicts, "
                "each judged again from its result folders by this version.",
            ),
        ] = False,
        from_evidence: Annotated[
            bool,
            typer.Option(
                "--from-evidence",
                help="Recompute every verdict and docs/replication/REPORT.md from the committed evidence alone "
                "(docs/replication/evidence/, checksums checked first); nothing is run, results/ is not read.",
            ),
        ] = False,
        again_: Annotated[
            bool,
            typer.Option(
                "--again",
                help="Run the claims again on fresh starts of their own, reusing none stored before: the second "
                "replication, hours after the first, that the report's 'Two runs' section compares with it.",
            ),
        ] = False,
        since_: Annotated[
            str | None,
            typer.Option(
                "--since",
                help="With --again: resume the replication that began at this UTC time (the one it printed, "
                "e.g. 2026-11-30T13:25:04.123456Z): the fresh starts it stored are reused, none before it.",
            ),
        ] = None,
        html: Annotated[
            Path | None,
            typer.Option(
                help="Write the HTML report (with its Claims section) here (default: results/replicate-<time>.html)."
            ),
        ] = None,
    ) -> None:
        """Re-run published benchmark claims (docs/design.md §10) and judge each row on direction and, where the
        source gives a figure, magnitude: replicated, direction only, contradicted, inconclusive (with the fresh
        starts it would need), or not testable here. Every run writes its verdict to results/claims/ and
        regenerates docs/replication/REPORT.md."""
        try:
            claims = load_all()
            if list_:
                console.print(list_table(claims))
                return
            if report_only:
                console.print(f"report written: {claims_report.write(claims)}")
                return
            if from_evidence:
                _from_evidence(claims)
                return
            if all_ == (claim_id is not None):
                raise UserError("give one claim id, or --all, or --list")
            named = [i.strip() for i in (claim_id or "").split(",") if i.strip()]
            # a claim named twice is one replication: run twice in one command, the second would judge
            # the first's fresh starts again as if it had measured them
            ids = list(dict.fromkeys(named))
            if len(ids) < len(named):
                twice = sorted({i for i in named if named.count(i) > 1})
                console.print(f"named more than once, run once: {', '.join(twice)}")
            if not all_ and not ids:
                raise UserError("give one claim id, or several comma-separated, or --all, or --list")
            chosen = claims if all_ else [find(i) for i in ids]
            if from_:
                if len(chosen) != 1:
                    raise UserError("--from recomputes one claim: give its id, not --all or several")
                _recompute(chosen[0], _folders(from_), pilot)
                return
            # Every claim is checked before any runs, so a bad claim stops --all before its first run.
            problems = []
            for claim in chosen:
                try:
                    preflight(claim, size_for(claim, quick, repetitions))
                except ClaimError as exc:
                    problems.append(str(exc))
            if problems:
                raise ClaimError("\n".join(problems))
        except ClaimError as exc:
            raise UserError(str(exc)) from exc
        resumed = _resumed_start(since_) if since_ else None
        if since_ and not again_:
            raise UserError("--since resumes an interrupted --again: give both")
        # before anything is judged: --again's hour apart and the report are read from the verdicts
        claims_report.restore_evidence(evidence.DIRECTORY, paths.RESULTS)
        with again(resumed) if again_ else nullcontext() as since:
            if since:
                console.print(
                    f"--again: a replication on fresh starts of its own; nothing stored before {since[:19]} UTC is "
                    f"reused. If it is interrupted, resume it with --again --since {since}"
                )
                if not resumed:
                    _warn_too_recent(chosen, "quick" if quick else "full", since)
            _run_claims(claims, chosen, quick, repetitions, pilot, html)
