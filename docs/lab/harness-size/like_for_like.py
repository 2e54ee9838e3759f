"""How much smaller harness/ is than when issue #44 was filed, like for like.

Every line of harness/**/*.py at COMMIT is attributed by `git blame` to the commit that wrote it. Lines
written before the filing (0ba2441) or by work on #44 count; lines that other issues' work added (new
features and their fixes) are set apart, because the target asks for the same features in fewer lines.
A commit's issue is the "(#N)" its subject ends with; commits.tsv beside this script says which issue an
untagged commit, or one tagged with #44 and another issue, served. A commit it does not list counts as #44.

    python3 docs/lab/harness-size/like_for_like.py [COMMIT]     # default HEAD
    python3 docs/lab/harness-size/like_for_like.py --unlisted   # commits that commits.tsv should classify
"""

from __future__ import annotations

import argparse
import re
import subprocess
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

FILING = "0ba2441"
SIZE_ISSUE = "#44"
TARGET = 0.85
TAG = re.compile(r"(?<![\w/.-])#(\d+)\b")
CLASSES = Path(__file__).with_name("commits.tsv")


def git(*args: str) -> str:
    return subprocess.run(["git", *args], check=True, capture_output=True, text=True).stdout


def harness_files(rev: str) -> list[str]:
    return [p for p in git("ls-tree", "-r", "--name-only", rev, "--", "harness").split() if p.endswith(".py")]


def lines_at(rev: str) -> int:
    return sum(len(git("show", f"{rev}:{path}").splitlines()) for path in harness_files(rev))


def blamed(rev: str, path: str) -> Counter[str]:
    out = git("blame", "--line-porcelain", rev, "--", path)
    return Counter(line[:40] for line in out.splitlines() if re.match(r"[0-9a-f]{40} \d+ \d+", line))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("commit", nargs="?", default="HEAD")
    parser.add_argument(
        "--unlisted", action="store_true", help="list the commits commits.tsv does not classify"
    )
    args = parser.parse_args()
    rev = git("rev-parse", args.commit).strip()
    by_commit: Counter[str] = Counter()
    with ThreadPoolExecutor(4) as pool:
        for counts in pool.map(lambda path: blamed(rev, path), harness_files(rev)):
            by_commit.update(counts)
    before = set(git("rev-list", FILING).split())
    listed = dict(
        line.split("\t")[:2] for line in CLASSES.read_text().splitlines() if line and line[0] != "#"
    )
    lines: Counter[str] = Counter()
    for sha, count in by_commit.items():
        if sha in before:
            lines["before the filing"] += count
            continue
        subject = git("log", "-1", "--format=%s", sha).strip()
        tags = {f"#{n}" for n in TAG.findall(subject)}
        if tags and SIZE_ISSUE not in tags:
            lines["other issues (tagged)"] += count
        elif sha[:8] in listed and listed[sha[:8]] != SIZE_ISSUE:
            lines["other issues (commits.tsv)"] += count
        else:
            lines[SIZE_ISSUE] += count
            if args.unlisted and tags != {SIZE_ISSUE} and sha[:8] not in listed:
                print(f"{sha[:8]}\t?\t{count}\t{subject[:100]}")
    total = sum(lines.values())
    baseline = lines_at(FILING)
    like = lines["before the filing"] + lines[SIZE_ISSUE]
    print(f"harness/ at {rev[:8]}: {total:,} lines; at the filing ({FILING}): {baseline:,}")
    for name, count in sorted(lines.items(), key=lambda kv: -kv[1]):
        print(f"  {name:<30}{count:>8,}")
    print(
        f"like for like: {like:,} lines, {100 * (like / baseline - 1):+.1f} % (target {baseline * TARGET:,.0f})"
    )
    print(f"as it stands:  {total:,} lines, {100 * (total / baseline - 1):+.1f} %")


if __name__ == "__main__":
    main()
