# ruff: noqa: E501
"""The campaign report (`report.html` in the findings directory): one self-contained page.

Counts per oracle and engine, construct coverage, program sizes, throughput, and every finding
with its shrunk and original program. Inline CSS only: no scripts, no network.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jinja2

from .findings import atomic_write_text

TEMPLATE = r"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>advalidate fuzz: {{ s.programs }} programs, {{ s.findings|length }} finding(s)</title>
<style>
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 70em; color: #222; padding: 0 1em; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 2em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; margin: 0.5em 0; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: right; }
th:first-child, td:first-child { text-align: left; }
th { background: #f3f3f3; }
.pass { color: #17692c; } .fail { color: #b00020; font-weight: bold; } .inc { color: #8a6d00; }
.ok { background: #e8f5e9; padding: 0.5em 1em; } .bad { background: #fdecea; padding: 0.5em 1em; }
pre { background: #f7f7f7; padding: 0.6em; overflow-x: auto; border: 1px solid #e3e3e3; }
.bar { display: inline-block; background: #6a8fd8; height: 0.8em; }
dl { display: grid; grid-template-columns: max-content auto; gap: 0.2em 1em; }
dt { font-weight: bold; } dd { margin: 0; }
.finding { border: 1px solid #ddd; padding: 0.5em 1em; margin: 1em 0; }
</style>
</head>
<body>
<h1>advalidate fuzzing campaign</h1>
{% if s.findings %}
<p class="bad">{{ s.findings|length }} finding(s): exit status {{ s.exit_status }}.</p>
{% else %}
<p class="ok">No findings in {{ s.programs }} programs: exit status {{ s.exit_status }}.</p>
{% endif %}
<dl>
<dt>seed</dt><dd>{{ s.seed }} (reproduce: <code>{{ s.reproduce }}</code>)</dd>
<dt>started</dt><dd>{{ s.started }}</dd>
<dt>time</dt><dd>{{ "%.1f"|format(s.elapsed_seconds) }} s of {{ s.seconds_requested }} s requested
  ({{ s.sessions }} session(s)); stopped: {{ s.stopped }}</dd>
<dt>workers</dt><dd>{{ s.workers }}</dd>
<dt>engines</dt><dd>{% for e in s.engines %}{{ e.name }}{% if e.spec != e.name %} ({{ e.spec }}){% endif %}{% if not loop.last %}, {% endif %}{% endfor %}</dd>
<dt>oracles</dt><dd>{{ s.oracles if s.oracles is string else s.oracles|join(", ") }}
  {% if s.sampled_oracles %}(sampled: {% for k, v in s.sampled_oracles.items() if v > 1 %}{{ k }} on 1 program in {{ v }}{% if not loop.last %}, {% endif %}{% endfor %}){% endif %}</dd>
<dt>versions</dt><dd>{% for k, v in versions.items() %}{{ k }} {{ v }}{% if not loop.last %}, {% endif %}{% endfor %}</dd>
</dl>

<h2>Throughput</h2>
<table>
<tr><th>programs</th><td>{{ s.programs }}</td></tr>
<tr><th>programs per second</th><td>{{ s.programs_per_second }}</td></tr>
<tr><th>programs per second per worker</th><td>{{ s.programs_per_second_per_worker }}</td></tr>
<tr><th>mean program size (AST nodes)</th><td>{{ s.mean_nodes }}</td></tr>
<tr><th>skipped (not well-behaved at the input)</th><td>{{ s.skipped_not_well_behaved }}</td></tr>
<tr><th>errors (generator / oracle)</th><td>{{ s.errors }}</td></tr>
<tr><th>incidents (worker crash / timeout)</th><td>{{ s.incidents|length }}</td></tr>
</table>

<h2>Verdicts per engine and oracle</h2>
<p>Each cell: <span class="pass">pass</span> / <span class="fail">fail</span> / <span class="inc">inconclusive</span>.</p>
<table>
<tr><th>engine</th>{% for o in oracles %}<th>{{ o }}</th>{% endfor %}<th>total</th></tr>
{% for e, cells in s.by_engine_oracle.items() %}
<tr><td>{{ e }}</td>
{% for o in oracles %}{% set c = cells.get(o, {}) %}
<td><span class="pass">{{ c.get("pass", 0) }}</span> / <span class="{{ 'fail' if c.get('fail', 0) else '' }}">{{ c.get("fail", 0) }}</span> / <span class="inc">{{ c.get("inconclusive", 0) }}</span></td>
{% endfor %}
{% set t = s.by_engine.get(e, {}) %}
<td>{{ t.get("pass", 0) }} / {{ t.get("fail", 0) }} / {{ t.get("inconclusive", 0) }}</td></tr>
{% endfor %}
<tr><th>total</th>{% for o in oracles %}{% set t = s.by_oracle.get(o, {}) %}<th>{{ t.get("pass", 0) }} / {{ t.get("fail", 0) }} / {{ t.get("inconclusive", 0) }}</th>{% endfor %}
<th>{{ s.verdicts.pass }} / {{ s.verdicts.fail }} / {{ s.verdicts.inconclusive }}</th></tr>
</table>

<h2>Construct coverage</h2>
<p>Number of checked programs that use each construct of the language.</p>
<table>
<tr><th>construct</th><th>programs</th><th>share</th><th></th></tr>
{% for k, n in s.coverage.items() %}
<tr><td>{{ k }}</td><td>{{ n }}</td><td>{{ "%.0f"|format(100.0 * n / (s.programs or 1)) }}%</td>
<td style="text-align:left"><span class="bar" style="width: {{ (200.0 * n / (s.programs or 1))|round(1) }}px"></span></td></tr>
{% endfor %}
</table>
{% if missing %}<p>Never generated: {{ missing|join(", ") }}.</p>{% endif %}

<h2>Program sizes</h2>
<table>
<tr><th>AST nodes</th><th>programs</th></tr>
{% for k, n in s.nodes_histogram.items() %}<tr><td>{{ k }}</td><td>{{ n }}</td></tr>{% endfor %}
</table>

<h2>Findings</h2>
{% if not findings %}<p>None.</p>{% endif %}
{% for f in findings %}
<div class="finding">
<h3>{{ f.name }}: {{ f.engine }} × {{ f.oracle }}</h3>
<dl>
<dt>detail</dt><dd>{{ f.detail }}</dd>
{% if f.expected is not none %}<dt>expected</dt><dd><code>{{ f.expected }}</code></dd>{% endif %}
{% if f.actual is not none %}<dt>actual</dt><dd><code>{{ f.actual }}</code></dd>{% endif %}
{% if f.cotangent is not none %}<dt>cotangent</dt><dd><code>{{ f.cotangent }}</code></dd>{% endif %}
<dt>status</dt><dd>{{ f.status }}; {{ f.sizes.before }} → {{ f.sizes.after }} AST nodes; seen {{ f.occurrences }} time(s)</dd>
<dt>signature</dt><dd>{{ f.signature or "-" }}</dd>
<dt>seed</dt><dd>{{ f.seed }} (program {{ f.program_index }} of campaign {{ f.campaign_seed }})</dd>
<dt>reproduce</dt><dd><code>{{ f.command }}</code></dd>
</dl>
<p>Shrunk program, at input <code>{{ f.input }}</code>:</p>
<pre>{{ f.program }}</pre>
<details><summary>original program ({{ f.sizes.before }} nodes), at input <code>{{ f.original_input }}</code></summary>
<pre>{{ f.original }}</pre></details>
</div>
{% endfor %}
{% if s.unclassified_failures %}
<p>Further failures not kept as separate findings (cap per engine × oracle reached):
{% for k, n in s.unclassified_failures.items() %}{{ k }}: {{ n }}{% if not loop.last %}, {% endif %}{% endfor %}.</p>
{% endif %}

<h2>Incidents</h2>
{% if not s.incidents %}<p>None.</p>{% else %}
<p>Worker processes that crashed or hung on a program were killed and replaced; the campaign went on.</p>
<table>
<tr><th>#</th><th>kind</th><th>program</th><th>seed</th><th>at (s)</th><th>detail</th><th>files</th></tr>
{% for i in s.incidents %}
<tr><td>{{ i.number }}</td><td>{{ i.kind }}</td><td>{{ i.index }}</td><td>{{ i.seed }}</td><td>{{ i.at }}</td>
<td style="text-align:left">{{ i.detail }}</td><td>{{ i.dir }}</td></tr>
{% endfor %}
</table>
{% endif %}
</body>
</html>
"""

ALL_CONSTRUCTS = (
    "lambda", "app", "let", "letrec", "if", "case-sum", "case-bool", "case-list", "par", "pair", "list-literal",
    "cons", "neg", "+R", "-R", "*R", "/R", "+Z", "-Z", "*Z", "<R", "<=R", ">R", ">=R", "<Z", "==Z",
    "sin", "cos", "tan", "exp", "log", "sqrt", "tanh", "atan", "real", "fst", "snd", "inl", "inr",
    "map", "foldl", "zipWith", "sum", "length", "parmap",
)  # fmt: skip


def render_report(summary: dict[str, Any], findings: list[dict[str, Any]]) -> str:
    env = jinja2.Environment(autoescape=True, undefined=jinja2.ChainableUndefined)
    oracles = sorted({o for cells in summary["by_engine_oracle"].values() for o in cells})
    missing = [c for c in ALL_CONSTRUCTS if c not in summary["coverage"]] if summary["programs"] else []
    versions = findings[0]["versions"] if findings else _versions()
    return env.from_string(TEMPLATE).render(
        s=summary, findings=findings, oracles=oracles, missing=missing, versions=versions
    )


def _versions() -> dict[str, str]:
    from .findings import versions

    return versions()


def write_report(path: Path | str, summary: dict[str, Any], findings: list[dict[str, Any]]) -> None:
    atomic_write_text(path, render_report(summary, findings))
