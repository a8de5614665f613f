"""The self-contained HTML page: one jinja2 template, inline CSS, inline SVG, no script.

Nothing in the page refers to anything outside it. Everything measured in wall time is marked
(`class="time"` on table cells, `class="plot time"` on figures, `class="timestamp"` on the date),
so that two runs' pages can be compared with the noisy parts taken out: the rest is identical.
The measured data, times excluded, is embedded as JSON in `<script type="application/json"
id="report-data">` for programs that check reports.
"""

from __future__ import annotations

import json
from typing import Any

import jinja2

TEMPLATE = r"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>advalidate: complexity of dual-numbers reverse AD ({{ mode }})</title>
<style>
body { font-family: "DejaVu Sans", Helvetica, Arial, sans-serif; margin: 0 auto; max-width: 72rem; padding: 1rem 2rem 4rem; color: #222; line-height: 1.45; }
h1 { font-size: 1.6rem; margin-bottom: 0.2rem; }
h2 { border-bottom: 2px solid #ddd; padding-bottom: 0.2rem; margin-top: 2.5rem; }
h3 { margin-top: 2rem; }
.meta { color: #555; font-size: 0.9rem; }
nav ul { columns: 3; font-size: 0.9rem; }
table { border-collapse: collapse; margin: 0.8rem 0; font-size: 0.86rem; }
th, td { border: 1px solid #ccc; padding: 0.25rem 0.5rem; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.ok { background: #e6f4e6; }
.bad { background: #fbe3e3; }
.inconclusive { background: #fff6d9; }
.mark { font-weight: bold; }
.time { color: #7a5c00; font-style: italic; }
figure { display: inline-block; margin: 0.4rem 1rem 0.4rem 0; vertical-align: top; }
figure svg { max-width: 100%; height: auto; }
figcaption { font-size: 0.8rem; color: #555; max-width: 36rem; }
figure.time figcaption { color: #7a5c00; }
pre { background: #f7f7f7; padding: 0.6rem; overflow-x: auto; font-size: 0.8rem; max-height: 16rem; }
details { margin: 0.5rem 0; }
summary { cursor: pointer; color: #1f4e8c; }
.note { font-size: 0.88rem; color: #444; max-width: 60rem; }
.noisy-banner { border-left: 4px solid #e0b000; background: #fffbea; padding: 0.4rem 0.8rem; font-size: 0.88rem; }
</style>
</head>
<body>
<header>
<h1>Complexity of dual-numbers reverse AD, measured</h1>
<p class="meta">advalidate {{ version }} · {{ mode }} report · {{ families|length }} program families × {{ engines|length }} stages of Smeding &amp; Vákár, <em>Parallel Dual-Numbers Reverse AD</em> (seed 000){% if peers %} · outside systems timed: {{ peers|join(", ") }}{% endif %} · generated <span class="timestamp">{{ timestamp }}</span> · {{ python }}</p>
<p class="note">Every cost below is an exact operation count from the engines' own cost models
(<code>back.stats</code>): the same on every machine and every run. Wall times are the only
measured quantities; they are <span class="time">marked like this</span> and are noisy.
n is each family's size parameter; T + I + O is the primal run's size in the sense of the paper's §3
(primitive operations T, plus input size I and output size O), so <em>cost / (T + I + O)</em> bounded
means the reverse pass is linear in the primal.</p>
<nav><ul>
<li><a href="#claims">The paper's argument</a></li>
<li><a href="#growth">Growth per family and stage</a></li>
{% for f in families %}<li><a href="#family-{{ f.name }}">{{ f.name }}</a></li>
{% endfor %}{% if parallel %}<li><a href="#parallel">Work, span and parallelism</a></li>{% endif %}
<li><a href="#walltime">Wall time{% if peers %} and outside systems{% endif %}</a></li>
<li><a href="#method">How this is measured</a></li>
</ul></nav>
</header>

<section id="claims">
<h2>The paper's argument, checked</h2>
<p class="note">Each problem of §6.2 shows in the stage before its fix and is gone in the stage the
paper says fixes it, on the family built to expose it. A row holds when both measured columns say what the paper says.</p>
<table class="claims">
<tr><th>problem</th><th>paper</th><th>family</th><th>shows in</th><th>paper says</th><th>measured</th><th>fixed by</th><th>paper says</th><th>measured</th><th>holds</th></tr>
{% for c in claims %}<tr data-claim="{{ c.claim.key }}" data-ok="{{ c.ok|lower }}" class="{{ 'ok' if c.ok else 'bad' }}">
<td>{{ c.claim.problem }}</td><td>{{ c.claim.where }}</td><td><a href="#family-{{ c.claim.family }}">{{ c.claim.family }}</a></td>
<td>{{ c.claim.shows.engine }}</td><td>{{ c.claim.shows.says }}</td>
<td data-engine="{{ c.claim.shows.engine }}" data-label="{{ c.shows.label if c.shows else '' }}" data-verdict="{{ c.shows.verdict.status if c.shows else 'missing' }}">{% if c.shows %}{{ c.shows.label }}, {{ c.shows.verdict.status }}{% else %}not measured{% endif %}</td>
<td>{{ c.claim.fixed.engine }}</td><td>{{ c.claim.fixed.says }}</td>
<td data-engine="{{ c.claim.fixed.engine }}" data-label="{{ c.fixed.label if c.fixed else '' }}" data-verdict="{{ c.fixed.verdict.status if c.fixed else 'missing' }}">{% if c.fixed %}{{ c.fixed.label }}, {{ c.fixed.verdict.status }}{% else %}not measured{% endif %}</td>
<td class="mark">{{ '✓' if c.ok else '✗' }}</td></tr>
{% endfor %}{% for l in linear %}<tr data-claim="linear-{{ l.engine }}" data-ok="{{ l.ok|lower }}" class="{{ 'ok' if l.ok else 'bad' }}">
<td>linear on every family: cost ≤ c·(T + I + O)</td><td>§3 criterion; §9{% if l.engine == 'tape' %}, §10{% elif l.engine == 'parallel' %}, §12 (work){% endif %}</td><td>all {{ l.linear|length + l.other|length }}</td>
<td colspan="3"></td><td>{{ l.engine }}</td><td>linear</td>
<td data-engine="{{ l.engine }}" data-verdict="{{ 'linear' if l.ok else 'not linear' }}">linear on {{ l.linear|length }}/{{ l.linear|length + l.other|length }}{% for f, s in l.other %}; {{ f }}: {{ s }}{% endfor %}</td>
<td class="mark">{{ '✓' if l.ok else '✗' }}</td></tr>
{% endfor %}{% if once_naive %}<tr data-claim="once-naive" data-ok="{{ ((once_naive.worst or 0) > 1)|lower }}" class="{{ 'ok' if (once_naive.worst or 0) > 1 else 'bad' }}">
<td>a backpropagator runs once per use of its value</td><td>§5, Fig. 2</td><td>all {{ once_naive.families }}</td>
<td colspan="3"></td><td>naive</td><td>&gt; 1 where values are shared</td>
<td data-engine="naive">most calls of one backpropagator: {{ once_naive.worst }}</td><td class="mark">{{ '✓' if (once_naive.worst or 0) > 1 else '✗' }}</td></tr>
{% endif %}{% if once_rest %}{% set all_once = once_rest|selectattr('ok')|list|length == once_rest|length %}<tr data-claim="once" data-ok="{{ all_once|lower }}" class="{{ 'ok' if all_once else 'bad' }}">
<td>every backpropagator runs at most once</td><td>§6 onwards (fn. 26)</td><td>all {{ once_rest[0].families }}</td>
<td colspan="3"></td><td>{{ once_rest|map(attribute='engine')|join(', ') }}</td><td>1</td>
<td>most calls of one backpropagator: {% for o in once_rest %}{{ o.engine }} {{ o.worst }}{{ ', ' if not loop.last }}{% endfor %}</td><td class="mark">{{ '✓' if all_once else '✗' }}</td></tr>
{% endif %}
</table>
</section>

<section id="growth">
<h2>Growth per family and stage</h2>
<p class="note">Each cell: the growth class of the reverse cost in n chosen by the information
criterion (a label), then the §3 verdict on cost / (T + I + O): <b>linear</b> (bounded over ≥ {{ min_decades }} decades of n),
<b>superlinear</b> (still rising), or <b>inconclusive</b> (too few sizes within the budget). The
primal's own growth is in the second column (neural's primal grows like n²: its linear stages do too).
Cells with a different gradient from the other engines would be marked "gradient differs"; none should be.</p>
<table class="growth">
<tr><th>family</th><th>primal T + I + O</th>{% for e in engines %}<th>{{ e }}</th>{% endfor %}</tr>
{% for f in families %}<tr data-family="{{ f.name }}"><td><a href="#family-{{ f.name }}">{{ f.name }}</a></td><td>{{ f.primal_label }}</td>
{% for e in engines %}{% set c = cells.get((f.name, e)) %}{% if c %}<td data-family="{{ f.name }}" data-engine="{{ e }}" data-label="{{ c.label }}" data-verdict="{{ c.verdict.status }}" class="{{ {'linear': 'ok', 'superlinear': 'bad'}.get(c.verdict.status, 'inconclusive') }}" title="{{ c.verdict.reason }}">{{ c.label }}<br><small>{{ c.verdict.status }}{% if c.skipped %}; {{ c.skipped }} skipped{% endif %}{% if c.agrees == false %}; gradient differs{% endif %}</small></td>{% else %}<td></td>{% endif %}{% endfor %}</tr>
{% endfor %}
</table>
</section>

<section id="families">
<h2>The families</h2>
{% for f in families %}<section class="family" id="family-{{ f.name }}" data-family="{{ f.name }}">
<h3>{{ f.name }}</h3>
<p class="note">{{ f.description }} <br><small>features: {{ f.features|join(", ") }} · n = {{ f.ns|join(", ") }}</small></p>
<details><summary>the program at n = {{ f.sample_n }}</summary><pre>{{ f.sample }}</pre></details>
<figure class="plot cost" data-family="{{ f.name }}">{{ f.cost_svg|safe }}<figcaption>Reverse cost against n (log-log); dashed: the primal's size T + I + O. A line parallel to it is linear.</figcaption></figure>
<figure class="plot ratio" data-family="{{ f.name }}">{{ f.ratio_svg|safe }}<figcaption>cost / (T + I + O): flat means linear in the primal (§3).</figcaption></figure>
{% if f.span_svg %}<figure class="plot span" data-family="{{ f.name }}">{{ f.span_svg|safe }}<figcaption>The parallel engine's work and span (§12), in the same cost units.</figcaption></figure>{% endif %}
<details><summary>measured data</summary>
<table class="data">
<tr><th>n</th><th>T</th><th>I</th><th>O</th>{% for e in f.columns %}<th>{{ e }}<br>reverse_cost</th><th>max calls</th>{% endfor %}<th class="time">plain primal s</th>{% for e in f.columns %}<th class="time">{{ e }} s</th>{% endfor %}</tr>
{% for row in f.rows %}<tr><td class="num">{{ row.n }}</td><td class="num">{{ row.T }}</td><td class="num">{{ row.I }}</td><td class="num">{{ row.O }}</td>
{% for v in row.cells %}{% if v.status == 'ok' %}<td class="num">{{ v.cost }}</td><td class="num">{{ v.calls }}</td>{% else %}<td colspan="2">{{ v.status }}</td>{% endif %}{% endfor %}
<td class="num time">{{ row.primal_s }}</td>{% for v in row.cells %}<td class="num time">{{ v.seconds }}</td>{% endfor %}</tr>
{% endfor %}
</table>
</details>
</section>
{% endfor %}
</section>

{% if parallel %}<section id="parallel">
<h2>Work, span and parallelism</h2>
<p class="note">The parallel engine (§12) on the families with <code>par</code> / <code>parmap</code>.
Work is the total cost, span the longest chain of dependent work through the job graph,
parallelism = work / span: how many processors could be kept busy. The paper bounds the work (§3 holds for it) and
leaves the span open. The reverse work is the engine's <code>reverse_cost</code>.</p>
<table class="parallel">
<tr><th>family</th><th>n</th><th>jobs</th><th>forward work</th><th>forward span</th><th>forward parallelism</th><th>reverse work</th><th>reverse span</th><th>reverse parallelism</th></tr>
{% for row in parallel %}<tr data-family="{{ row.family }}"><td>{{ row.family }}</td><td class="num">{{ row.n }}</td><td class="num">{{ row.jobs }}</td><td class="num">{{ row.fw }}</td><td class="num">{{ row.fs }}</td><td class="num">{{ row.fp }}</td><td class="num">{{ row.rw }}</td><td class="num">{{ row.rs }}</td><td class="num">{{ row.rp }}</td></tr>
{% endfor %}
</table>
</section>{% endif %}

<section id="walltime">
<h2>Wall time{% if peers %} and outside systems{% endif %}</h2>
<p class="noisy-banner">Everything in this section is measured time: it depends on the machine and its load,
changes from run to run, and says nothing the operation counts above do not say better. Engines
here are pure Python; each time is one <code>vjp</code> plus one backpropagator call, including
the engine's transformation of the program.{% if peers %} Outside systems ({{ peers|join(", ") }}) are driven through
<code>to_python</code> by their adapters and timed the same way{% endif %}.{% if peer_notes %} {{ peer_notes }}{% endif %}</p>
{% for f in families %}<figure class="plot time" data-family="{{ f.name }}">{{ f.time_svg|safe }}<figcaption>{{ f.name }}: seconds against n (noisy).</figcaption></figure>
{% endfor %}
{% if peer_rows %}<table class="peers">
<tr><th>family</th><th>n</th><th>T + I + O</th><th class="time">plain primal s</th>{% for e in time_columns %}<th class="time">{{ e }} s</th>{% endfor %}</tr>
{% for row in peer_rows %}<tr><td>{{ row.family }}</td><td class="num">{{ row.n }}</td><td class="num">{{ row.size }}</td><td class="num time">{{ row.primal_s }}</td>{% for v in row.cells %}<td class="num time">{{ v }}</td>{% endfor %}</tr>
{% endfor %}
</table>{% endif %}
</section>

<section id="method">
<h2>How this is measured</h2>
<ul class="note">
<li>Families: <code>advalidate.generators.families</code>; inputs are the families' seeded inputs, the same on every machine.
Sizes n = 1, 2, 4, … up to the family's largest n in this mode.</li>
<li>Each engine runs <code>vjp</code> and one backpropagator call with an all-ones output cotangent.
Its <code>back.stats</code> give <code>reverse_cost</code>, <code>primal_ops</code> (T), <code>input_size</code> (I), <code>output_size</code> (O)
and <code>backprop_calls_max</code>. Gradients of all engines are compared (to 1e-9 relative).</li>
<li>Budget: an engine skips a size when the cost predicted from its two previous sizes exceeds {{ budget }} operations,
and every larger size after that ("skipped: over budget"). The decision uses counts only, so the same sizes are measured on every run.</li>
<li>Growth class: the models a·g(n) + b·n + c for g in 1, log n, n, n log n, n², 2ⁿ, fitted by least squares
on relative residuals; the smallest BIC wins, a simpler class being preferred within ΔBIC &lt; 2, and a superlinear
class only counting when its leading term carries at least a quarter of the cost at the largest n.</li>
<li>Verdict "linear": r(n) = cost / (T + I + O) is bounded: over the last decade of n it rises by at most
{{ tolerance }} of its final value, or by at most half of what it rose over the decade before (a start-up cost
converging to a constant), and n spans at least {{ min_decades }} decades.</li>
<li>Settings of this run: {{ settings }}.</li>
</ul>
</section>
<script type="application/json" id="report-data">{{ data_json|safe }}</script>
</body>
</html>
"""  # noqa: E501 - HTML lines are as long as their markup


def render(context: dict[str, Any]) -> str:
    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined, keep_trailing_newline=True)
    ctx = dict(context)
    ctx["data_json"] = json.dumps(context["data"], sort_keys=True, ensure_ascii=False).replace("</", "<\\/")
    return env.from_string(TEMPLATE).render(**ctx)
