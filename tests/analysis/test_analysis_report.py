"""The HTML report, rendered in headless Chromium.

Screenshot check: the report is rendered at 1280x3000 with `chromium --headless --screenshot`; the PNG must
have exactly that size, its top-left corner must be the report's dark blue header, and the page must not be
blank: more than 3 % of its pixels are non-white, it has more than 100 distinct colours (text, tables,
banner) and a grey-level standard deviation above 15. A DOM check runs beside it: a copy of the report gets
a small inline script that records JavaScript errors and, on load, writes a marker element listing every
section id, the number of <img> elements and those not decoded (naturalWidth == 0); `--dump-dom` prints
the DOM after load and the test reads the marker.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from PIL import Image, ImageStat

from harness.analysis.report import SECTIONS, render_html

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or "/usr/bin/chromium"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
]
PROBE = """<script>
window.__errors = [];
window.addEventListener('error', function (e) { window.__errors.push(String(e.message || e)); });
window.addEventListener('load', function () {
  var imgs = Array.prototype.slice.call(document.images);
  var broken = imgs.filter(function (i) { return !(i.complete && i.naturalWidth > 0); })
                   .map(function (i) { return i.alt; });
  var sections = Array.prototype.map.call(document.querySelectorAll('section[id]'), function (s) { return s.id; });
  var m = document.createElement('div');
  m.id = 'render-check';
  m.setAttribute('data-result', JSON.stringify({images: imgs.length, broken: broken,
    errors: window.__errors, sections: sections, width: document.body.scrollWidth}));
  document.body.appendChild(m);
});
</script>"""


def _chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    if not Path(CHROMIUM).exists():
        pytest.fail("chromium is not installed: run `./bidbench setup` (or apt-get install -y chromium)")
    profile = tmp_path / f"profile-{len(list(tmp_path.glob('profile-*')))}"
    return subprocess.run(
        [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *args],
        capture_output=True,
        text=True,
        timeout=180,
    )


@pytest.fixture(scope="module")
def report_html(study_comparison) -> str:
    return render_html(study_comparison)


def test_report_is_self_contained(report_html):
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", report_html)
    assert "@import" not in report_html and "url(" not in report_html
    assert report_html.count('src="data:image/png;base64,') == 8
    for section_id, _ in SECTIONS:
        assert f'<section id="{section_id}">' in report_html


def test_report_renders_in_chromium_with_every_section_and_plot(tmp_path, report_html, study_comparison):
    page = tmp_path / "report-probe.html"
    page.write_text(report_html.replace("</head>", PROBE + "\n</head>", 1), encoding="utf-8")
    done = _chromium(tmp_path, "--virtual-time-budget=15000", "--dump-dom", page.as_uri())
    assert done.returncode == 0, done.stderr[-2000:]
    match = re.search(r"""id="render-check" data-result="([^"]*)\"""", done.stdout)
    assert match, "the load marker is missing: the page did not finish loading"
    result = json.loads(match.group(1).replace("&quot;", '"').replace("&amp;", "&"))
    assert result["errors"] == []
    assert result["images"] == 8 and result["broken"] == []
    assert result["sections"] == [sid for sid, _ in SECTIONS]
    for table_id in (
        "table-7-1",
        "table-7-2",
        "figure-7-5",
        "qos",
        "errors",
        "table-breakdown",
        "anova",
    ):
        assert f'id="{table_id}"' in done.stdout
    assert "EXCLUDED" in done.stdout  # the banner about the 3 excluded runs


def test_report_screenshot_is_not_blank(tmp_path, report_html):
    """Screenshot check: Chromium renders the report at 1280x3000 into a PNG; the PNG has that size, its
    top-left pixel is the dark blue header (not white), more than 3 % of its pixels are non-white, it holds
    more than 100 distinct colours, and its grey-level standard deviation exceeds 15: a blank or unstyled
    page fails all of these."""
    page = tmp_path / "report.html"
    page.write_text(report_html, encoding="utf-8")
    shot = tmp_path / "shot.png"
    done = _chromium(tmp_path, "--window-size=1280,3000", f"--screenshot={shot}", page.as_uri())
    assert done.returncode == 0 and shot.exists(), done.stderr[-2000:]
    image = Image.open(shot).convert("RGB")
    assert image.size == (1280, 3000)
    r, g, b = image.getpixel((5, 5))
    assert (r, g, b) != (255, 255, 255) and b > r  # the dark blue header
    grey = image.convert("L")
    histogram = grey.histogram()
    non_white = 1.0 - sum(histogram[250:]) / (image.width * image.height)
    assert non_white > 0.03
    assert len(image.getcolors(maxcolors=1_000_000) or []) > 100
    assert ImageStat.Stat(grey).stddev[0] > 15


def test_report_with_invalid_runs_carries_the_banner(study, tmp_path):
    from harness.analysis.comparison import compare

    comparison = compare([study.root], metrics=["capacity"], include_invalid=True, n_resamples=199)
    html = render_html(comparison)
    assert 'class="banner invalid"' in html and "INCLUDES 2 INVALID" in html
