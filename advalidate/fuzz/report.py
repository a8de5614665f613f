# ruff: noqa: E501
"""The campaign report (`report.html` in the findings directory): one self-contained page.

Verdict counts per oracle and engine (pass / fail / inconclusive / not applicable, apart, and why
verdicts were inconclusive), construct coverage, program sizes, throughput, and every finding: its
class (engine, construct at fault, kind of mismatch), the oracles that saw it and how often,
expected and actual values with what each is, the error and where it is, its shrunk and original
program, and the command that replays it as printed. The counts are those of `summary.json` and
of each `finding.json`. Inline CSS only: no scripts, no network.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup

from ..lang.primitives import ELEMENTARY
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
.na { color: #777; }
.scroll { overflow-x: auto; max-width: 100%; }
code { overflow-wrap: anywhere; }
td.text { text-align: left; }
</style>
</head>
<body>
<h1>advalidate fuzzing campaign</h1>
{% if s.findings %}
<p class="bad">{{ s.findings|length }} finding(s) in {{ s.programs }} programs: exit status {{ s.exit_status }}.</p>
{% else %}
<p class="ok">No findings in {{ s.programs }} programs: exit status {{ s.exit_status }}.</p>
{% endif %}
<dl>
<dt>seed</dt><dd>{{ s.seed }} (the same programs again: <code>{{ s.reproduce }}</code>)</dd>
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
<tr><th>of which use arrays</th><td>{{ s.array_programs }}</td></tr>
<tr><th>of which use derivative operators</th><td>{{ s.nested_programs }}</td></tr>
<tr><th>programs per second</th><td>{{ s.programs_per_second }}</td></tr>
<tr><th>programs per second per worker</th><td>{{ s.programs_per_second_per_worker }}</td></tr>
<tr><th>mean program size (AST nodes)</th><td>{{ s.mean_nodes }}</td></tr>
<tr><th>skipped (not well-behaved at the input)</th><td>{{ s.skipped_not_well_behaved }}</td></tr>
<tr><th>errors (generator / oracle)</th><td>{{ s.errors }}</td></tr>
<tr><th>incidents (worker crash / timeout)</th><td>{{ s.incidents|length }}</td></tr>
</table>

<h2>Verdicts per engine and oracle</h2>
<p>{{ s.verdicts.pass }} pass, {{ s.verdicts.fail }} fail, {{ s.verdicts.inconclusive }} inconclusive,
{{ s.verdicts.not_applicable }} not applicable. Each cell: <span class="pass">pass</span> / <span class="fail">fail</span> /
<span class="inc">inconclusive</span> (the oracle could not decide here: reasons below) / <span class="na">not applicable</span>
(the oracle's question does not apply to that engine, e.g. <code>once</code> on an engine that makes no such promise).</p>
<div class="scroll"><table>
<tr><th>engine</th>{% for o in oracles %}<th>{{ o }}</th>{% endfor %}<th>total</th></tr>
{% for e, cells in s.by_engine_oracle.items() %}
<tr><td>{{ e }}</td>
{% for o in oracles %}{% set c = cells.get(o, {}) %}
<td>{{ cell(c) }}</td>
{% endfor %}
<td>{{ cell(s.by_engine.get(e, {})) }}</td></tr>
{% endfor %}
<tr><th>total</th>{% for o in oracles %}<th>{{ cell(s.by_oracle.get(o, {})) }}</th>{% endfor %}
<th>{{ cell(s.verdicts) }}</th></tr>
</table></div>
{% if s.inconclusive_reasons %}
<h3>Why verdicts were inconclusive</h3>
<div class="scroll"><table>
<tr><th>engine</th><th>oracle</th><th>reason</th><th>verdicts</th></tr>
{% for r in s.inconclusive_reasons[:40] %}<tr><td>{{ r.engine }}</td><td>{{ r.oracle }}</td><td class="text">{{ r.reason }}</td><td>{{ r.count }}</td></tr>
{% endfor %}
</table></div>
{% if s.inconclusive_reasons|length > 40 %}<p>… {{ s.inconclusive_reasons|length - 40 }} more in summary.json.</p>{% endif %}
{% endif %}

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
{% if not findings %}<p>None.</p>{% else %}
<p>One finding per bug: failures of one engine with the same construct at fault in the shrunk program
and the same kind of mismatch, whichever oracles saw them.</p>
{% endif %}
{% for f in findings %}
<div class="finding" id="{{ f.name }}">
<h3>{{ f.name }}: {{ f.signature }}</h3>
<p>{% if f.mismatch and f.mismatch != f.kind %}<b>{{ f.mismatch }}</b>. {% endif %}Seen in <b>{{ f.occurrences }}</b> program(s);
failing oracles: {% for o in f.oracles %}{{ o }} ({{ f.oracle_counts[o] }}){% if not loop.last %}, {% endif %}{% endfor %}.
{% if not f.settled %}Not classified yet: the campaign stopped before its shrinking ended.{% endif %}</p>
<div class="scroll"><table>
<tr><th colspan="2">{{ f.oracle }} on the shrunk program{% if f.numeric %} (engine in {{ f.numeric }}){% endif %}</th></tr>
<tr><td>what</td><td class="text">{{ f.detail }}</td></tr>
{% if f.expected is not none %}<tr><td>expected: {{ f.expected_label }}</td><td class="text"><code>{{ f.expected }}</code></td></tr>{% endif %}
{% if f.actual is not none %}<tr><td>actual: {{ f.actual_label }}</td><td class="text"><code>{{ f.actual }}</code></td></tr>{% endif %}
{% if f.abs_err is not none %}<tr><td>error</td><td class="text">absolute {{ num(f.abs_err) }}, relative {{ num(f.rel_err) }}</td></tr>{% endif %}
{% if f.positions %}<tr><td>differs at</td><td class="text">{{ f.positions|join(", ") }} <small>(dx[k]: the k-th real of the input, y[j]: the j-th real of the output, J[j,k]: a Jacobian entry)</small></td></tr>{% endif %}
{% if f.tolerance %}<tr><td>tolerance</td><td class="text">{{ f.tolerance }}</td></tr>{% endif %}
{% if f.cotangent is not none %}<tr><td>cotangent (random)</td><td class="text"><code>{{ f.cotangent }}</code></td></tr>{% endif %}
</table></div>
<dl>
<dt>status</dt><dd>{{ f.status }}; {{ f.sizes.before }} → {{ f.sizes.after }} AST nodes</dd>
<dt>seed</dt><dd>{{ f.seed }} (program {{ f.program_index }} of campaign {{ f.campaign_seed }})</dd>
<dt>reproduce</dt><dd><code>{{ f.command }}</code></dd>
</dl>
<p>Shrunk program, at input <code>{{ f.input }}</code>:</p>
<pre>{{ f.program }}</pre>
{% if f.witnesses|length > 1 %}<details><summary>what each oracle said (on the first program it failed)</summary>
<div class="scroll"><table>
<tr><th>oracle</th><th>detail</th><th>abs. error</th><th>rel. error</th><th>differs at</th></tr>
{% for o, w in f.witnesses.items() %}<tr><td>{{ o }}</td><td class="text">{{ w.detail }}</td><td>{{ num(w.abs_err) }}</td><td>{{ num(w.rel_err) }}</td><td class="text">{{ (w.positions or [])|join(", ") }}</td></tr>
{% endfor %}</table></div></details>{% endif %}
<details><summary>original program ({{ f.sizes.before }} nodes), at input <code>{{ f.original_input }}</code></summary>
<pre>{{ f.original }}</pre></details>
</div>
{% endfor %}
{% if s.unexamined_failures %}
<p>{{ s.unexamined_failures|length }} failing program(s) were not examined before the campaign stopped
(seeds in summary.json).</p>
{% endif %}
{% if s.unclassified_failures %}
<p>Further failures not kept as separate findings (cap per engine reached):
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
    *ELEMENTARY, "real", "fst", "snd", "inl", "inr",
    "map", "foldl", "zipWith", "sum", "length", "parmap",
)  # fmt: skip


def render_report(summary: dict[str, Any], findings: list[dict[str, Any]]) -> str:
    env = jinja2.Environment(autoescape=True, undefined=jinja2.ChainableUndefined)
    env.globals.update(cell=_cell, num=_num)
    oracles = sorted({o for cells in summary["by_engine_oracle"].values() for o in cells})
    missing = [c for c in ALL_CONSTRUCTS if c not in summary["coverage"]] if summary["programs"] else []
    versions = findings[0]["versions"] if findings else _versions()
    return env.from_string(TEMPLATE).render(
        s=summary, findings=findings, oracles=oracles, missing=missing, versions=versions
    )


def _cell(c: dict[str, int]) -> Markup:
    """pass / fail / inconclusive / not applicable, coloured."""
    fail = c.get("fail", 0)
    return Markup(
        f'<span class="pass">{c.get("pass", 0)}</span> / <span class="{"fail" if fail else ""}">{fail}</span> / '
        f'<span class="inc">{c.get("inconclusive", 0)}</span> / <span class="na">{c.get("not_applicable", 0)}</span>'
    )


def _num(x: Any) -> str:
    if x is None:
        return "-"
    try:
        return f"{float(x):.3g}"
    except (TypeError, ValueError):
        return str(x)


def _versions() -> dict[str, str]:
    from .findings import versions

    return versions()


def write_report(path: Path | str, summary: dict[str, Any], findings: list[dict[str, Any]]) -> None:
    atomic_write_text(path, render_report(summary, findings))
