"""The HTML report's jinja2 template: one self-contained page (inline CSS, PNGs as data URIs, no scripts,
no fonts or anything else fetched from the network)."""

TEMPLATE = r"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>bidbench comparison report</title>
<style>
  :root { --fg: #1d232b; --muted: #5b6673; --line: #d8dde3; --sig: #0b6b2f; --worse: #9b1c1c; --bg2: #f5f7f9; }
  body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; color: var(--fg);
         margin: 0; background: #fff; }
  main { max-width: 1180px; margin: 0 auto; padding: 1rem 1.5rem 4rem; }
  header.top { background: #17324d; color: #fff; padding: 1.2rem 1.5rem; }
  header.top h1 { margin: 0; font-size: 1.6rem; }
  header.top p { margin: .3rem 0 0; color: #c9d6e3; }
  nav { background: var(--bg2); border-bottom: 1px solid var(--line); padding: .5rem 1.5rem; font-size: .9rem; }
  nav a { margin-right: .9rem; color: #17324d; white-space: nowrap; }
  section { border-top: 1px solid var(--line); padding-top: .6rem; margin-top: 1.6rem; }
  h2 { font-size: 1.35rem; margin: .4rem 0; }
  h3 { font-size: 1.05rem; margin: 1.1rem 0 .3rem; }
  .explain { background: #eef5fb; border-left: 4px solid #3d7ab8; padding: .5rem .8rem; margin: .5rem 0 .8rem;
             max-width: 60rem; }
  .banner { padding: .8rem 1rem; margin: 1rem 0; border-radius: 4px; font-weight: 600; }
  .banner.invalid { background: #fde8e8; border: 2px solid #c81e1e; color: #771d1d; font-size: 1.05rem; }
  .banner.excluded { background: #fff8e1; border: 1px solid #e0a800; color: #5c4300; }
  .banner.clean { background: #e8f5ec; border: 1px solid #3c9a5f; color: #1e5631; font-weight: normal; }
  table { border-collapse: collapse; margin: .4rem 0 .6rem; font-size: .86rem; }
  th, td { border: 1px solid var(--line); padding: .25rem .5rem; text-align: left; vertical-align: top; }
  th { background: var(--bg2); }
  tbody tr:nth-child(even) td { background: #fbfcfd; }
  td.better { color: var(--sig); font-weight: 600; }
  td.worse { color: var(--worse); font-weight: 600; }
  td.changed { font-weight: 600; }
  td.same { color: var(--muted); }
  td.flag { color: var(--worse); font-weight: 600; }
  .caption { color: var(--muted); font-size: .85rem; margin: .1rem 0 .3rem; max-width: 70rem; }
  .notes { color: var(--muted); font-size: .85rem; }
  .empty { color: var(--muted); font-style: italic; }
  .scroll { overflow-x: auto; }
  figure { margin: .6rem 0 1rem; }
  figure img { max-width: 100%; height: auto; border: 1px solid var(--line); }
  figcaption { color: var(--muted); font-size: .85rem; }
  .verdicts li { margin: .15rem 0; }
  dl.glossary dt { font-weight: 600; margin-top: .5rem; }
  dl.glossary dd { margin-left: 1rem; }
  .source { font-size: .8rem; color: var(--muted); }
  details > summary { cursor: pointer; color: #17324d; }
</style>
</head>
<body>
<header class="top">
  <h1>bidbench comparison report</h1>
  <p>{{ subtitle }}</p>
</header>
<nav>
  {% for sid, title in sections %}<a href="#{{ sid }}">{{ title }}</a>{% endfor %}
</nav>
<main>
{% if banner_invalid %}<div class="banner invalid" id="banner">&#9888; {{ banner_invalid }}</div>{% endif %}
{% if banner_excluded %}<div class="banner excluded" id="banner-excluded">{{ banner_excluded }}</div>{% endif %}
{% if not banner_invalid and not banner_excluded %}<div class="banner clean" id="banner">All {{ n_runs }} runs found are valid and used.</div>{% endif %}

{# render_table(t, collapsed): harness/analysis/table_render.py html_table #}

{% macro render_figure(f) -%}
  <figure id="{{ f.id }}">
    <h3>{{ f.title }}</h3>
    <p class="explain">{{ f.explanation }}</p>
    {% if f.png %}<img src="{{ f.data_uri }}" alt="{{ f.title }}">{% else %}<p class="empty">No plot: {{ f.missing }}</p>{% endif %}
    {% if f.notes %}<figcaption>{{ f.notes }}</figcaption>{% endif %}
  </figure>
{%- endmacro %}

{% if glance %}
<section id="glance">
  <h2>At a glance: {{ glance.title }}</h2>
  <ul class="verdicts">{% for s in glance.sentences %}<li>{{ s }}</li>{% endfor %}</ul>
  {{ render_figure(glance.figure) }}
  {{ render_table(glance.table) }}
</section>
{% endif %}

<section id="overview">
  <h2>Overview</h2>
  <p>{{ n_runs }} runs used ({{ n_invalid_used }} of them invalid), {{ n_excluded }} excluded, from {{ sources }}.
     Implementations: {{ labels|join(", ") }}. Regimes: {{ regimes|join(", ") }}.
     Confidence {{ confidence_pct }} %, significance level alpha = {{ alpha }}.</p>
  <p class="explain">A benchmark result is a decision: is A faster or leaner than B, by how much, and how sure
  are we? Each configuration was run several times from a fresh start; every figure below is a mean (or median)
  over those repetitions with a {{ confidence_pct }} % confidence interval, and a difference is only called a difference when a
  statistical test says it is unlikely to be noise. "~" means: no significant difference.</p>
  {% if headline %}
  <h3>In plain words ({{ headline_set }})</h3>
  <ul class="verdicts">{% for s in headline %}<li>{{ s }}</li>{% endfor %}</ul>
  {% endif %}
  {% if warnings %}
  <details><summary>{{ warnings|length }} warning(s) about sample sizes and data</summary>
  <ul class="notes">{% for w in warnings %}<li>{{ w }}</li>{% endfor %}</ul></details>
  {% endif %}
</section>

<section id="verdicts">
  <h2>Verdicts</h2>
  <p class="explain">One table per comparison (the same regime and point): each cell is mean ± half its {{ confidence_pct }} %
  confidence interval, with the number of runs. The last columns compare every implementation with the first:
  a change in per cent where the test finds it significant, "~" where it does not, always with the p-value and
  the sample sizes. This is the format of Go's benchstat.</p>
  {% for t in verdict_tables %}{{ render_table(t) }}{% endfor %}
</section>

<section id="statistics">
  <h2>Statistics in detail</h2>
  <p class="explain">With three or more implementations, an analysis of variance (ANOVA) first asks whether any
  of them differ at all; a post-hoc test (Tukey HSD, or Games-Howell when the groups' variances differ) then says
  which pairs do. Groups sharing a letter are not significantly different (the notation of Freire et al., “Experimental study for evaluating the performance of Java virtual machines in
  application integration”, Tables 5-7).</p>
  {{ render_table(anova, collapsed=anova.rows|length > 15) }}
  {{ render_table(details, collapsed=True) }}
  {{ render_table(ratios, collapsed=True) }}
</section>

<section id="throughput">
  <h2>Throughput against offered rate</h2>
  {{ render_figure(figures["fig-throughput-offered"]) }}
</section>

<section id="latency">
  <h2>Latency against throughput</h2>
  {{ render_figure(figures["fig-latency-throughput"]) }}
  {% if not ladder_steps.is_empty %}{{ render_table(ladder_steps, collapsed=True) }}{% endif %}
</section>

<section id="normalized">
  <h2>Normalized throughput</h2>
  {{ render_figure(figures["fig-normalized"]) }}
  {{ render_table(tables["table-7-2"]) }}
</section>

<section id="cpu">
  <h2>CPU utilization</h2>
  <p class="explain">How much of the CPU it was allowed does each implementation actually use? A single-threaded
  runtime tops out near 100 % of one core per instance; a multi-threaded one may leave cores idle (thesis §7.3).</p>
  {{ render_table(tables["table-7-1"]) }}
  {{ render_figure(figures["fig-throughput-cpu"]) }}
</section>

<section id="memory">
  <h2>Memory</h2>
  {{ render_figure(figures["fig-memory"]) }}
  {{ render_figure(figures["fig-memory-cpu"]) }}
  {{ render_table(tables["figure-7-5"]) }}
</section>

<section id="users">
  <h2>Concurrent users</h2>
  <p class="explain">RUBiS Revisited showed that two implementations with the same throughput can differ widely
  in quality of service: the worst case, the median, and how many requests take longer than a second.</p>
  {{ render_table(tables["qos"]) }}
  {{ render_figure(figures["fig-users"]) }}
  {{ render_table(tables["errors"]) }}
</section>

<section id="breakdown">
  <h2>Time breakdown</h2>
  {{ render_figure(figures["fig-breakdown"]) }}
  {{ render_table(tables["table-breakdown"]) }}
  {{ render_table(tables["breakdown-by-point"]) }}
</section>

{% if claim_tables %}
<section id="claims">
  <h2>Claims</h2>
  <p class="explain">Published benchmark claims re-run on this machine with <code>./bidbench replicate</code>
  (docs/design.md §10). Each table sets our figures, a mean with its 95 % confidence interval per variant and the ratio
  of means with a bootstrap interval, beside the published ones. <b>Replicated</b>: the whole interval lies on
  the expected side. <b>Contradicted</b>: it lies wholly on the other side. <b>Inconclusive</b>: anything
  else, including too few valid runs.</p>
  {% for t in claim_tables %}{{ render_table(t) }}{% endfor %}
</section>
{% endif %}

{% if resilience %}
<section id="resilience">
  <h2>Resilience</h2>
  <p class="explain">Fault scenarios (<code>./bidbench faults</code>): the database stopped, slowed or resetting
  connections behind Toxiproxy, twice the measured capacity, an instance killed with SIGKILL, each under a fixed
  arrival rate. The contract asks for 503 while the database is unreachable, never a 500, a hang or a crash, and
  no lost or duplicated bids afterwards.</p>
  {{ render_table(resilience.table) }}
  {% for f in resilience.figures %}{{ render_figure(f) }}{% endfor %}
</section>
{% endif %}

<section id="manifest">
  <h2>What was run, where</h2>
  <p class="explain">Every run's manifest records the host, the versions of every runtime and the knobs each app
  ran with (docs/design.md §3.3: no app is tuned silently). Fields that are the same everywhere come first.</p>
  {% for t in manifest_tables %}{{ render_table(t) }}{% endfor %}
</section>

<section id="runs">
  <h2>Runs</h2>
  {{ render_table(runs_excluded) }}
  {{ render_table(runs_used, collapsed=True) }}
</section>

<section id="method">
  <h2>Method and glossary</h2>
  <dl class="glossary">
    <dt>Repetition</dt><dd>One fresh start of the instances and one measured window; each run gives one number
    per metric (docs/design.md §8).</dd>
    <dt>{{ confidence_pct }} % confidence interval (CI)</dt><dd>A range built so that, over many repeated experiments, {{ confidence_pct }} % of such
    ranges contain the true value. Mean: Student's t-interval. Median: an interval between two order statistics
    (distribution-free), or a seeded bootstrap when there are too few runs for that.</dd>
    <dt>p-value</dt><dd>How often a difference at least this large would appear by chance if there were no real
    difference. Below alpha = {{ alpha }} the difference is called significant.</dd>
    <dt>Welch's t-test</dt><dd>Compares two means without assuming equal variances ({{ two_group_test }} is used
    for two groups here).</dd>
    <dt>ANOVA, Tukey HSD, Games-Howell</dt><dd>For three or more groups: ANOVA tests whether any mean differs;
    Tukey HSD then compares every pair while keeping the overall false-alarm rate at alpha; Games-Howell does the
    same when Levene's test finds unequal variances (after Welch's ANOVA).</dd>
    <dt>Bootstrap ratio</dt><dd>The ratio of two means with an interval from {{ resamples }} seeded resamples of
    the runs (BCa), so the same folders always give the same interval.</dd>
    <dt>Normalized throughput</dt><dd>Throughput / CPU %: requests per second per per cent of one core.</dd>
    <dt>Utilized CPU</dt><dd>CPU % / (instances x CPU limit x 100).</dd>
    <dt>Invalid run</dt><dd>A run that failed a validity check (docs/design.md §7): the load generator was the bottleneck,
    it sent requests late, the database was saturated, and so on. Such runs are excluded unless asked for.</dd>
  </dl>
  <p class="source">Generated by bidbench {{ version }} at {{ generated }} (UTC). Every number is computed from
  the result folders listed under Runs; run <code>python compare.py {{ sources }} --html ...</code> to reproduce.</p>
</section>
</main>
</body>
</html>
"""
