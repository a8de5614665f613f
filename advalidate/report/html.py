"""The self-contained HTML page: one jinja2 template, inline CSS, plots as `data:` SVG images, no script.

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
import markupsafe

TEMPLATE = r"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>advalidate: complexity of dual-numbers reverse AD ({{ mode }})</title>
<style>
* { box-sizing: border-box; }
body { font-family: "DejaVu Sans", Helvetica, Arial, sans-serif; margin: 0 auto; max-width: 86rem; padding: 1rem 1.5rem 4rem; color: #222; line-height: 1.45; overflow-wrap: break-word; }
h1 { font-size: 1.6rem; margin-bottom: 0.4rem; }
h2 { border-bottom: 2px solid #ddd; padding-bottom: 0.2rem; margin-top: 2.5rem; }
h3 { margin-top: 2.2rem; }
.verdict { font-size: 1.05rem; margin: 0.4rem 0 0.6rem; padding: 0.5rem 0.8rem; border-left: 6px solid; }
.verdict.ok { background: #e6f4e6; border-color: #2e7d32; }
.verdict.bad { background: #fbe3e3; border-color: #c62828; }
.meta { color: #555; font-size: 0.9rem; margin: 0.3rem 0; }
nav ul { columns: 3 12rem; font-size: 0.9rem; }
.scroll { overflow-x: auto; max-width: 100%; margin: 0.8rem 0; }
.scroll > table { margin: 0; }
table { border-collapse: collapse; margin: 0.8rem 0; font-size: 0.86rem; }
th, td { border: 1px solid #ccc; padding: 0.25rem 0.5rem; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
table.claims { width: 100%; }
table.claims td.mark { text-align: center; font-size: 1.1rem; width: 3.2rem; }
table.claims tr.group th { background: #e8edf4; text-align: left; }
table.growth { font-size: 0.78rem; width: 100%; }
table.growth th, table.growth td { padding: 0.2rem 0.3rem; overflow-wrap: normal; }
table.growth td { min-width: 4.6rem; }
table.growth td:first-child, table.growth td:nth-child(2) { min-width: 0; }
.nw { white-space: nowrap; }
table.growth td small, table.claims small { color: #444; }
table.data, table.times { font-size: 0.8rem; }
.ok { background: #e6f4e6; }
.bad { background: #fbe3e3; }
.inconclusive { background: #fff6d9; }
.mark { font-weight: bold; }
.time { color: #7a5c00; font-style: italic; }
.poor { border-bottom: 1px dotted #555; cursor: help; }
.plots { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(100%, 36rem), 1fr)); gap: 1rem 1.5rem; margin: 0.8rem 0; }
figure { margin: 0; min-width: 0; }
figure img { display: block; width: 100%; max-width: 730px; height: auto; }
figcaption { font-size: 0.8rem; color: #555; }
figure.time figcaption { color: #7a5c00; }
pre { background: #f7f7f7; padding: 0.6rem; overflow-x: auto; font-size: 0.8rem; max-height: 16rem; }
details { margin: 0.5rem 0; }
summary { cursor: pointer; color: #1f4e8c; }
.note { font-size: 0.88rem; color: #444; max-width: 62rem; }
.reading { font-size: 0.88rem; max-width: 62rem; background: #f5f7fa; padding: 0.3rem 0.6rem; }
.noisy-banner { border-left: 4px solid #e0b000; background: #fffbea; padding: 0.4rem 0.8rem; font-size: 0.88rem; }
dl.terms { font-size: 0.88rem; max-width: 62rem; }
dl.terms dt { font-weight: bold; margin-top: 0.4rem; }
dl.terms dd { margin-left: 1.2rem; }
</style>
</head>
<body>
<header>
<h1>Complexity of dual-numbers reverse AD, measured</h1>
<p id="verdict" class="verdict {{ 'ok' if verdict.ok else 'bad' }}" data-ok="{{ verdict.ok|lower }}" data-checks="{{ verdict.checks }}"><strong>{{ '✓' if verdict.ok else '✗' }} Verdict: {{ verdict.head }}</strong>{{ verdict.tail }} (<a href="#claims">details</a>).</p>
<p class="meta">advalidate {{ version }} · {{ mode }} report · {{ families|length }} program families × {{ engines|length }} stages of Smeding &amp; Vákár, <em>Parallel Dual-Numbers Reverse AD</em> (seed 000){% if arrays %} · {{ arrays.families|length }} array families × {{ arrays.stages|length }} stages of Smeding, Konarski, Peyton Jones &amp; Fitzgibbon, <em>Dual-Numbers Reverse AD for Functional Array Languages</em> (seed 004){% endif %} · generated <span class="timestamp">{{ timestamp }}</span> · {{ python }}</p>
<p class="meta" id="outside-systems">Outside AD systems (wall time only): {% for p in peer_status %}<span data-peer="{{ p.name }}" data-status="{{ p.status }}"><b>{{ p.name }}</b> {{ p.text }}</span>{{ ' · ' if not loop.last }}{% endfor %}.</p>
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
{% endfor %}{% if arrays %}<li><a href="#arrays">Arrays (seed 004)</a></li>{% endif %}{% if nested %}<li><a href="#nested">Nested AD (seed 001)</a></li>{% endif %}{% if parallel %}<li><a href="#parallel">Work, span and parallelism</a></li>{% endif %}
<li><a href="#walltime">Wall time{% if peers %} and outside systems{% endif %}</a></li>
<li><a href="#method">How this is measured</a></li>
</ul></nav>
</header>

<section id="claims">
<h2>The paper's argument, checked</h2>
<p class="note">Each problem of §6.2 shows in the stage before its fix and is gone in the stage the
paper says fixes it, on the family built to expose it. A row holds (✓) when both measured cells say what the paper says.
"cost ~ g" is how the reverse cost grows with n; "linear" / "superlinear" is the §3 verdict on cost / (T + I + O).</p>
<div class="scroll"><table class="claims">
<tr><th>holds</th><th>problem (paper)</th><th>family</th><th>before the fix</th><th>after the fix</th></tr>
{% for c in claims %}<tr data-claim="{{ c.claim.key }}" data-ok="{{ c.ok|lower }}" class="{{ 'ok' if c.ok else 'bad' }}">
<td class="mark">{{ '✓' if c.ok else '✗' }}</td>
<td>{{ c.claim.problem }}<br><small>{{ c.claim.where }}</small></td><td><a href="#family-{{ c.claim.family }}">{{ c.claim.family }}</a></td>
<td data-engine="{{ c.claim.shows.engine }}" data-label="{{ c.shows.label if c.shows else '' }}" data-verdict="{{ c.shows.status if c.shows else 'missing' }}"><b>{{ c.claim.shows.engine }}</b><br>paper: {{ c.claim.shows.says }}<br>measured: {% if c.shows %}cost ~ {{ c.shows.growth }}, {{ c.shows.status }}{% else %}not measured{% endif %}</td>
<td data-engine="{{ c.claim.fixed.engine }}" data-label="{{ c.fixed.label if c.fixed else '' }}" data-verdict="{{ c.fixed.status if c.fixed else 'missing' }}"><b>{{ c.claim.fixed.engine }}</b><br>paper: {{ c.claim.fixed.says }}<br>measured: {% if c.fixed %}cost ~ {{ c.fixed.growth }}, {{ c.fixed.status }}{% else %}not measured{% endif %}</td></tr>
{% endfor %}{% for l in linear %}<tr data-claim="linear-{{ l.engine }}" data-ok="{{ l.ok|lower }}" class="{{ 'ok' if l.ok else 'bad' }}">
<td class="mark">{{ '✓' if l.ok else '✗' }}</td>
<td>linear on every family: cost ≤ c·(T + I + O)<br><small>§3 criterion; §9{% if l.engine == 'tape' %}, §10{% elif l.engine == 'parallel' %}, §12 (work){% endif %}</small></td><td>all {{ l.linear|length + l.other|length }}</td>
<td>—</td>
<td data-engine="{{ l.engine }}" data-verdict="{{ 'linear' if l.ok else 'not linear' }}"><b>{{ l.engine }}</b><br>paper: linear<br>measured: linear on {{ l.linear|length }}/{{ l.linear|length + l.other|length }}{% for f, s in l.other %}; {{ f }}: {{ s }}{% endfor %}</td></tr>
{% endfor %}{% if once_naive %}<tr data-claim="once-naive" data-ok="{{ once_naive.shows_sharing|lower }}" class="{{ 'ok' if once_naive.shows_sharing else 'bad' }}">
<td class="mark">{{ '✓' if once_naive.shows_sharing else '✗' }}</td>
<td>a backpropagator runs once per use of its value<br><small>§5, Fig. 2</small></td><td>all {{ once_naive.families }}</td>
<td data-engine="naive"><b>naive</b><br>paper: &gt; 1 call where values are shared<br>measured: most calls of one backpropagator {{ once_naive.worst }}</td><td>—</td></tr>
{% endif %}{% if once_rest %}{% set all_once = once_rest|selectattr('ok')|list|length == once_rest|length %}<tr data-claim="once" data-ok="{{ all_once|lower }}" class="{{ 'ok' if all_once else 'bad' }}">
<td class="mark">{{ '✓' if all_once else '✗' }}</td>
<td>every backpropagator runs at most once<br><small>§6 onwards (fn. 26)</small></td><td>all {{ once_rest[0].families }}</td>
<td>—</td>
<td><b>{{ once_rest|map(attribute='engine')|join(', ') }}</b><br>paper: 1<br>measured, most calls of one backpropagator: {% for o in once_rest %}{{ o.engine }} {{ o.worst }}{{ ', ' if not loop.last }}{% endfor %}</td></tr>
{% endif %}{% if arrays %}<tr class="group"><th colspan="5">Arrays: seed 004 (<a href="#arrays">details</a>); counts of <code>back.stats</code>, growth classes fitted as above</th></tr>
{% for c in arrays.claims %}<tr data-claim="{{ c.key }}" data-ok="{{ c.ok|lower }}" class="{{ 'ok' if c.ok else 'bad' }}">
<td class="mark">{{ '✓' if c.ok else '✗' }}</td>
<td>{{ c.problem }}<br><small>{{ c.where }}</small></td><td><a href="#arrays">{{ c.family }}</a></td>
{% for side in (c.before, c.after) %}<td data-engine="{{ side|map(attribute='stage')|join(' ') }}" data-label="{{ side|map(attribute='label')|join(' ') }}" data-verdict="{{ 'holds' if side|selectattr('ok')|list|length == side|length else 'fails' }}">{% for s in side %}<b>{{ s.stage }}</b>{% if not s.ok %} ✗{% endif %}<br>paper: {{ s.says }}<br>measured: {{ s.measured }}{% if not loop.last %}<br>{% endif %}{% endfor %}</td>{% endfor %}</tr>
{% endfor %}{% if arrays.bulk %}{% set b = arrays.bulk %}<tr data-claim="{{ b.key }}" data-ok="{{ b.ok|lower }}" class="{{ 'ok' if b.ok else 'bad' }}">
<td class="mark">{{ '✓' if b.ok else '✗' }}</td>
<td>reverse_elem_ops ≤ C · primal_elem_ops, C = {{ arrays.constant }}, at every n ≥ {{ arrays.n0 }}<br><small>seed 004 §5-§7: once the builds are bulk operations, the gradient costs a constant factor of the program</small></td><td>all {{ b.families }} array families</td>
<td>{% if b.without %}<b>dualarrays</b> (no bot; not a check)<br>up to {{ b.without }}{% else %}—{% endif %}</td>
<td data-engine="{{ b.stages|map(attribute='stage')|join(' ') }}" data-verdict="{{ 'holds' if b.ok else 'fails' }}">{% for s in b.stages %}<b>{{ s.stage }}</b>{% if not s.ok %} ✗{% endif %}<br>paper: ≤ C · primal<br>measured on {{ s.families }} families: at most {{ s.worst }}{% if s.declined %}; declined: {{ s.declined|join(', ') }}{% endif %}{% for f in s.failing %}; {{ f }}{% endfor %}{% if not loop.last %}<br>{% endif %}{% endfor %}</td></tr>
{% endif %}{% endif %}{% if nested %}<tr class="group"><th colspan="5">Nested AD: seed 001 (<a href="#nested">details</a>); operation counts of <code>back.stats</code></th></tr>
{% for c in nested.claims %}<tr data-claim="{{ c.key }}" data-ok="{{ c.ok|lower }}" class="{{ 'ok' if c.ok else 'bad' }}">
<td class="mark">{{ '✓' if c.ok else '✗' }}</td>
<td>{{ c.problem }}<br><small>{{ c.where|safe }}</small></td><td><a href="#nested">hvp</a></td>
<td>—</td><td data-verdict="{{ 'holds' if c.ok else 'fails' }}">paper: {{ c.paper }}<br>measured: {{ c.measured }}</td></tr>
{% endfor %}{% endif %}
</table></div>
</section>

<section id="growth">
<h2>Growth per family and stage</h2>
<p class="note">Each cell, top to bottom:
<b>the §3 verdict</b>, whether the reverse cost is linear in the primal's size, that is, whether cost / (T + I + O) stays bounded
(<b>linear</b>: bounded over ≥ {{ min_decades }} decades of n; <b>superlinear</b>: still rising; <b>inconclusive</b>: too few sizes within the budget);
<b>cost ~ g</b>, how the reverse cost itself grows with n (1, log n, n, n log n, n², n³ or an exponential bⁿ, chosen by an information criterion);
then the largest ratio (linear), the ratio's rise over the last decade of n (superlinear) or why there is no verdict.
The verdict is the test; the class describes. They differ when the primal does not grow like n (neural's primal grows like n², so
its linear stages show "linear, cost ~ n²"), and a slow log factor can hide in "cost ~ n" at these sizes while the ratio still shows it.
<span class="poor" title="no growth class fits within {{ good_fit }} relative RMS residual">?</span> after a class: a poor fit, no class
describes the costs within {{ good_fit }} (relative RMS), the closest is shown; "—": fewer than four sizes, nothing fitted.
Hover a cell for the verdict's reason.</p>
<div class="scroll"><table class="growth">
<tr><th>family</th><th>primal T + I + O</th>{% for e in engines %}<th>{{ e }}</th>{% endfor %}</tr>
{% for f in families %}<tr data-family="{{ f.name }}"><td><a href="#family-{{ f.name }}">{{ f.name|breakable }}</a></td><td>~ {{ f.primal_label }}</td>
{% for e in engines %}{% set c = cells.get((f.name, e)) %}{% if c %}<td data-family="{{ f.name }}" data-engine="{{ e }}" data-label="{{ c.label }}" data-verdict="{{ c.status }}" class="{{ c.css }}" title="{{ c.reason }}"><b>{{ c.status }}</b><br>cost ~ <span class="nw">{{ c.growth }}</span>{% if c.poor %}<span class="poor" title="poor fit: no class describes the costs within {{ good_fit }}">?</span>{% endif %}<br><small>{{ c.ratio }}{% if c.skipped %}; {{ c.skipped }} size{{ 's' if c.skipped != 1 }} skipped{% endif %}{% if c.errors %}; {{ c.errors }} error{{ 's' if c.errors != 1 }}{% endif %}{% if c.agrees == false %}; gradient differs{% endif %}</small></td>{% else %}<td></td>{% endif %}{% endfor %}</tr>
{% endfor %}
</table></div>
</section>

<section id="families">
<h2>The families</h2>
{% for f in families %}<section class="family" id="family-{{ f.name }}" data-family="{{ f.name }}">
<h3>{{ f.name }}</h3>
<p class="note">{{ f.description }} <br><small>features: {{ f.features|join(", ") }} · n = {{ f.ns|join(", ") }}</small></p>
<p class="reading">{{ f.reading }}</p>
{% if f.note %}<p class="note family-note">{{ f.note }}</p>{% endif %}
<details><summary>the program at n = {{ f.sample_n }}</summary><pre>{{ f.sample }}</pre></details>
<div class="plots">
<figure class="plot cost" data-family="{{ f.name }}"><img src="{{ f.cost_plot.uri }}" width="{{ f.cost_plot.width }}" height="{{ f.cost_plot.height }}" alt="{{ f.cost_plot.alt }}"><figcaption>Reverse cost against n (log-log). Dashed black: the primal's size T + I + O; a line parallel to it is linear. Grey dotted: reference slopes ∝ n and ∝ n² through the lowest first point. A stage whose line stops early skipped the larger sizes (over the operation budget; the legend says from which n).</figcaption></figure>
<figure class="plot ratio" data-family="{{ f.name }}"><img src="{{ f.ratio_plot.uri }}" width="{{ f.ratio_plot.width }}" height="{{ f.ratio_plot.height }}" alt="{{ f.ratio_plot.alt }}"><figcaption>cost / (T + I + O): flat means linear in the primal (§3). Grey dotted: what a ratio growing ∝ log n (an n log n stage) or ∝ n (a quadratic one) looks like.</figcaption></figure>
{% if f.span_plot %}<figure class="plot span" data-family="{{ f.name }}"><img src="{{ f.span_plot.uri }}" width="{{ f.span_plot.width }}" height="{{ f.span_plot.height }}" alt="{{ f.span_plot.alt }}"><figcaption>The parallel engine's work and span (§12), in the same cost units; parallelism = work / span.</figcaption></figure>{% endif %}
</div>
<details><summary>measured data</summary>
<div class="scroll"><table class="data">
<tr><th>n</th><th>T</th><th>I</th><th>O</th>{% for e in f.columns %}<th>{{ e }}<br>reverse_cost</th><th>max calls</th>{% endfor %}<th class="time">plain primal s</th>{% for e in f.columns %}<th class="time">{{ e }} s</th>{% endfor %}</tr>
{% for row in f.rows %}<tr><td class="num">{{ row.n }}</td><td class="num">{{ row.T }}</td><td class="num">{{ row.I }}</td><td class="num">{{ row.O }}</td>
{% for v in row.cells %}{% if v.status == 'ok' %}<td class="num">{{ v.cost }}</td><td class="num">{{ v.calls }}</td>{% else %}<td colspan="2">{{ v.status }}</td>{% endif %}{% endfor %}
<td class="num time">{{ row.primal_s }}</td>{% for v in row.cells %}<td class="num time">{{ v.seconds }}</td>{% endfor %}</tr>
{% endfor %}
</table></div>
</details>
</section>
{% endfor %}
</section>

{% if arrays %}<section id="arrays">
<h2>Arrays: seed 004's stages, measured on counts</h2>
<p class="note">Smeding, Konarski, Peyton Jones &amp; Fitzgibbon (seed 004) differentiate array programs with dual
numbers in four stages: <b>delta</b> (§2: dual numbers with a Delta term, arrays element at a time),
<b>dualarrays</b> (§4.2, §6: an array paired with one Delta), <b>bot</b> (§5: the bulk-operation transformation
rewrites every <code>build</code> into gathers, replicates and element-wise operations, then §6) and
<b>compiled</b> (§7: the same differentiated at compile time into a gradient program). Everything here is a count
of <code>back.stats</code>: <code>delta_nodes</code> (Delta constructors made), <code>onehot_volume</code>
(elements of one-hot and multi-hot cotangent arrays allocated), <code>primal_elem_ops</code> and
<code>reverse_elem_ops</code> (element operations of the program and of the reverse pass). Growth classes are
fitted as for seed 000 (a "?" marks a fit worse than {{ arrays.good_fit }}); a stage skips the sizes whose predicted
reverse cost is over the budget. <code>compiled</code> declines what it has no symbolic derivative for
(<code>maxOuter</code>'s arg-max), which is not a failure.</p>
<div class="plots">
{% for f in arrays.figures %}<figure class="plot arrays {{ f.kind }}" data-family="{{ f.family }}"><img src="{{ f.plot.uri }}" width="{{ f.plot.width }}" height="{{ f.plot.height }}" alt="{{ f.plot.alt }}"><figcaption>{{ f.caption }}</figcaption></figure>
{% endfor %}</div>
<p class="note">Per family and stage: how the Delta nodes and the one-hot volume grow with n ("1": the same count at
every n; "—": fewer than four sizes within the budget, nothing fitted; "none": zero at every n), then the largest
reverse_elem_ops / primal_elem_ops at n ≥ {{ arrays.n0 }}. The gradients of the four stages are compared at every n
(to 1e-9 relative); the counts below say where one differs.</p>
<div class="scroll"><table class="growth arrays">
<tr><th>array family</th>{% for e in arrays.stages %}<th>{{ e }}</th>{% endfor %}</tr>
{% for row in arrays.table %}<tr data-array-family="{{ row.name }}"><td>{{ row.name|breakable }}</td>
{% for c in row.cells %}{% if c.status == 'ok' or c.status == 'error' %}<td data-array-family="{{ row.name }}" data-engine="{{ c.stage }}" data-deltas="{{ c.deltas }}" data-onehot="{{ c.onehot }}" data-ratio="{{ '%.3g'|format(c.ratio_max) }}" class="{{ 'bad' if c.status == 'error' else '' }}"{% if c.why %} title="{{ c.why }}"{% endif %}>Delta nodes {% if c.deltas == '0' %}none{% else %}~ <span class="nw">{{ c.deltas }}</span>{% endif %}<br>one-hot {% if c.onehot == '0' %}none{% else %}~ <span class="nw">{{ c.onehot }}</span>{% endif %}<br><small>reverse / primal ≤ {{ '%.3g'|format(c.ratio_max) }}{% if c.skipped %}; {{ c.skipped }} size{{ 's' if c.skipped != 1 }} skipped{% endif %}</small></td>{% else %}<td data-array-family="{{ row.name }}" data-engine="{{ c.stage }}" class="inconclusive" title="{{ c.why }}">{{ 'declined' if c.status == 'declined' else 'not measured' }}</td>{% endif %}{% endfor %}</tr>
{% endfor %}
</table></div>
<details><summary>measured counts, by array family ({{ arrays.families|length }} families)</summary>
{% for f in arrays.families %}<section class="array-family" id="array-{{ f.name }}" data-array-family="{{ f.name }}">
<h3>{{ f.name }}</h3>
<p class="note">{{ f.description }} <br><small>n = {{ f.ns|join(", ") }}</small></p>
<details><summary>the program at n = {{ f.sample_n }}</summary><pre>{{ f.sample }}</pre></details>
<div class="scroll"><table class="data">
<tr><th rowspan="2">n</th>{% for e in arrays.stages %}<th colspan="5">{{ e }}</th>{% endfor %}{% for e in arrays.stages %}<th class="time" rowspan="2">{{ e }} s</th>{% endfor %}</tr>
<tr>{% for e in arrays.stages %}<th>Delta nodes</th><th>one-hot volume</th><th>primal elem ops</th><th>reverse elem ops</th><th>ratio</th>{% endfor %}</tr>
{% for row in f.rows %}<tr><td class="num">{{ row.n }}</td>
{% for v in row.cells %}{% if v.status == 'ok' %}<td class="num">{{ v.deltas }}</td><td class="num">{{ v.onehot }}</td><td class="num">{{ v.primal }}</td><td class="num">{{ v.reverse }}</td><td class="num">{{ v.ratio }}{% if v.agrees == false %} (gradient differs){% endif %}</td>{% else %}<td colspan="5" title="{{ v.status }}">{{ v.status.split(':')[0] }}</td>{% endif %}{% endfor %}
{% for v in row.cells %}<td class="num time">{{ v.seconds }}</td>{% endfor %}</tr>
{% endfor %}
</table></div>
</section>
{% endfor %}</details>
</section>{% endif %}

{% if nested %}<section id="nested">
<h2>Nested AD (seed 001)</h2>
<p class="note">Derivative operators inside programs, eliminated into ordinary code (seed 001 §3-§5 by seed 000's
rules) and differentiated again by each stage. Perturbation confusion: <code>{{ nested.program }}</code> at z = 0.7 must
give 1 (value) and 0 (gradient) on every stage.</p>
<div class="scroll"><table class="nested confusion">
<tr>{% for c in nested.confusion %}<th>{{ c.stage }}</th>{% endfor %}</tr>
<tr>{% for c in nested.confusion %}<td data-engine="{{ c.stage }}" data-ok="{{ c.ok|lower }}" class="{{ 'ok' if c.ok else 'bad' }}">{{ c.text }}</td>{% endfor %}</tr>
</table></div>
<p class="note">Hessian-vector products of f_n(x) = Σ x<sub>i</sub> x<sub>i+1</sub> + Σ sin x<sub>i</sub> (an n-tuple; primal 4n − 3
operations), each as its cost divided by f's primal operations. Reverse over forward: the stage's <code>vjp</code> of
<code>jvp f x v</code>, forward and reverse pass (<code>primal_ops + reverse_cost</code>). Forward over reverse: evaluating the
eliminated <code>jvp (\y -&gt; grad f y) x v</code>; reverse over reverse: tape's <code>vjp</code> of ∇f(x)·v (both run seed 001's
naive inner reverse, whose every + builds an n-tuple: linear per HVP). The claims: on tape ≤ {{ nested.constant }} at
n ≥ {{ nested.n0 }}, and no growth on the linear stages.</p>
<div class="scroll"><table class="data nested hvp">
<tr><th rowspan="2">n</th><th rowspan="2">f primal ops</th><th colspan="{{ nested.stages|length }}">reverse over forward, per stage</th><th rowspan="2">forward over reverse</th><th rowspan="2">reverse over reverse (tape)</th></tr>
<tr>{% for e in nested.stages %}<th>{{ e }}</th>{% endfor %}</tr>
{% for r in nested.rows %}<tr data-n="{{ r.n }}"><td class="num">{{ r.n }}</td><td class="num">{{ r.primal }}</td>{% for v in r.rof %}<td class="num">{{ v }}</td>{% endfor %}<td class="num">{{ r.for }}</td><td class="num">{{ r.ror }}</td></tr>
{% endfor %}
</table></div>
</section>{% endif %}

{% if parallel %}<section id="parallel">
<h2>Work, span and parallelism</h2>
<p class="note">The parallel engine (§12) on the families with <code>par</code> / <code>parmap</code>.
Work is the total cost, span the longest chain of dependent work through the job graph,
parallelism = work / span: how many processors could be kept busy. The paper bounds the work (§3 holds for it) and
leaves the span open. The reverse work is the engine's <code>reverse_cost</code>.</p>
<div class="scroll"><table class="parallel">
<tr><th>family</th><th>n</th><th>jobs</th><th>forward work</th><th>forward span</th><th>forward parallelism</th><th>reverse work</th><th>reverse span</th><th>reverse parallelism</th></tr>
{% for row in parallel %}<tr data-family="{{ row.family }}"><td>{{ row.family }}</td><td class="num">{{ row.n }}</td><td class="num">{{ row.jobs }}</td><td class="num">{{ row.fw }}</td><td class="num">{{ row.fs }}</td><td class="num">{{ row.fp }}</td><td class="num">{{ row.rw }}</td><td class="num">{{ row.rs }}</td><td class="num">{{ row.rp }}</td></tr>
{% endfor %}
</table></div>
</section>{% endif %}

<section id="walltime">
<h2>Wall time{% if peers %} and outside systems{% endif %}</h2>
<p class="noisy-banner">Everything in this section is measured time: it depends on the machine and its load,
changes from run to run, and says nothing the operation counts above do not say better. Engines
here are pure Python; each time is one <code>vjp</code> plus one backpropagator call, including
the engine's transformation of the program.{% if peers %} Outside systems timed here ({{ peers|join(", ") }}) are driven through
<code>to_python</code> by their adapters and timed the same way, only at sizes within their limit.{% endif %}
{% for p in peer_status if p.status != 'timed' %}{% if loop.first %}Not timed: {% endif %}{{ p.name }} ({{ p.text }}){{ ', ' if not loop.last else '.' }}{% endfor %}</p>
{% if time_summary %}<p class="note">One row per family, at the largest n where the most systems were timed. Each cell: gradient time ÷ the
plain-float primal's time at that n (the ratio of the paper's Table 1; lower is better), then the time itself.
Every timed size is in the table below it.</p>
<div class="scroll"><table class="times">
<tr><th>family</th><th>n</th><th>T + I + O</th><th class="time">plain primal</th>{% for e in time_columns %}<th class="time">{{ e }}<br><small>÷ primal<br>time</small></th>{% endfor %}</tr>
{% for g in time_summary %}{% set row = g.summary %}<tr data-family="{{ g.family }}"><td>{{ g.family }}</td><td class="num">{{ row.n }}</td><td class="num">{{ row.size }}</td><td class="num time">{{ row.primal }}</td>{% for v in row.cells %}<td class="num time">{% if v.timed %}<b>{{ v.ratio }}</b><br><small>{{ v.time }}</small>{% else %}—{% endif %}</td>{% endfor %}</tr>
{% endfor %}
</table></div>
<details><summary>every timed size, by family ({{ time_summary|sum(attribute='rows', start=[])|length }} rows)</summary>
<div class="scroll"><table class="times detail">
<tr><th>family</th><th>n</th><th>T + I + O</th><th class="time">plain primal</th>{% for e in time_columns %}<th class="time">{{ e }}<br><small>÷ primal · time</small></th>{% endfor %}</tr>
{% for g in time_summary %}{% for row in g.rows %}<tr>{% if loop.first %}<th rowspan="{{ g.rows|length }}">{{ g.family }}</th>{% endif %}<td class="num">{{ row.n }}</td><td class="num">{{ row.size }}</td><td class="num time">{{ row.primal }}</td>{% for v in row.cells %}<td class="num time">{% if v.timed %}{{ v.ratio }} · {{ v.time }}{% else %}—{% endif %}</td>{% endfor %}</tr>
{% endfor %}{% endfor %}
</table></div>
</details>{% endif %}
<div class="plots">
{% for f in families %}<figure class="plot time" data-family="{{ f.name }}"><img src="{{ f.time_plot.uri }}" width="{{ f.time_plot.width }}" height="{{ f.time_plot.height }}" alt="{{ f.time_plot.alt }}"><figcaption>{{ f.name }}: seconds against n (noisy); dashed: the plain-float primal.</figcaption></figure>
{% endfor %}</div>
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
<li>Growth class ("cost ~ g"): the models a·g(n) + b·n + c for g in 1, log n, n, n log n, n², n³, bⁿ, fitted by least squares
on relative residuals; the smallest BIC wins, a simpler class being preferred within ΔBIC &lt; 2, and a superlinear
class only counting when its leading term carries at least a quarter of the cost at the largest n. A "?" marks a label
whose best fit leaves more than {{ good_fit }} relative RMS residual.</li>
<li>Verdict "linear": r(n) = cost / (T + I + O) is bounded: over the last decade of n it rises by at most
{{ tolerance }} of its final value, or by at most half of what it rose over the decade before (a start-up cost
converging to a constant), and n spans at least {{ min_decades }} decades.</li>
{% if arrays %}<li>Arrays (seed 004): the families of <code>ARRAY_FAMILIES</code> at n = 1, 2, 4, … on {{ arrays.stages|join(", ") }};
each run is one <code>vjp</code> and one backpropagator call with an all-ones cotangent, and its <code>back.stats</code> give the counts.
"Θ(g)" holds when the growth class fitted to the counts is g (within {{ arrays.good_fit }} relative RMS, at least four sizes
over a decade of n), "O(1) in n" when the count is the same at every n, "O(n)" when the class is at most n or the count is
zero throughout. <code>python3 -m advalidate.report.check</code> judges these claims again from the counts embedded in the page.</li>
{% endif %}<li>Plots are drawn with matplotlib and embedded in this file as SVG images; the reference slopes are guides for the eye, not fits.</li>
<li>Settings of this run: {{ settings }}.</li>
</ul>
</section>
<script type="application/json" id="report-data">{{ data_json|safe }}</script>
</body>
</html>
"""  # noqa: E501 - HTML lines are as long as their markup


def _breakable(name: str) -> markupsafe.Markup:
    """A family name that may wrap after its underscores (rotate_vec_by_quat in a narrow column)."""
    return markupsafe.escape(name).replace("_", markupsafe.Markup("_<wbr>"))


def render(context: dict[str, Any]) -> str:
    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined, keep_trailing_newline=True)
    env.filters["breakable"] = _breakable
    ctx = dict(context)
    ctx["data_json"] = json.dumps(context["data"], sort_keys=True, ensure_ascii=False).replace("</", "<\\/")
    return env.from_string(TEMPLATE).render(**ctx)
