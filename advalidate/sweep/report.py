"""report.html of a sweep: the findings, what the library already knows, and a table per op and mode."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jinja2

from advalidate.sweep.records import MODES

TEMPLATE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>advalidate sweep {{ s.library }}</title>
<style>
body { font-family: sans-serif; margin: 2em; } table { border-collapse: collapse; margin-bottom: 1.5em; }
td, th { border: 1px solid #ccc; padding: 2px 6px; font-size: 13px; vertical-align: top; }
.fail { background: #fdd; } .known { background: #ffe9c6; } .pass { background: #e6f6e6; } .none { color: #999; }
code { font-size: 12px; }
</style></head><body>
<h1>advalidate sweep {{ s.library }} ({{ s.version }})</h1>
<p>{{ s.ops_checked }} of {{ s.ops_selected }} ops, {{ s.samples }} samples, {{ s.records }} records
(samples and their perturbed variants) in {{ s.seconds }} s; stopped: {{ s.stopped }}.
Verdicts: {% for k, v in s.verdicts.items() %}{{ k }} {{ v }}{% if not loop.last %}, {% endif %}{% endfor %}.</p>
<h2>New findings ({{ s.findings | length }})</h2>
{% if s.findings %}<table><tr><th>op</th>
<th>mode</th>
<th>kind</th>
<th>first seen</th>
<th>occurrences</th>
<th>detail</th>
<th>directory</th></tr>
{% for f in s.findings %}<tr class="fail"><td>{{ f.op }}</td>
<td>{{ f.mode }} ({{ f.dtype | default("float64") }}, {{ f.transform | default("eager") }})</td>
<td>{{ f.kind }}</td>
<td>sample {{ f.sample }} {{ f.variant }}</td>
<td>{{ f.occurrences }}</td>
<td>{{ f.detail }}</td>
<td><code>{{ f.dir }}</code></td></tr>
{% endfor %}</table>{% else %}<p>None.</p>{% endif %}
{% if s.hidden %}<h2>Expected to fail by the library's own tests ({{ s.hidden | length }})</h2>
<p>The library's database marks these checks as expected failures without naming an upstream issue:
its own tests hide them. Not counted as new findings.</p>
<table><tr><th>op</th>
<th>mode</th>
<th>kind</th>
<th>the database says</th>
<th>detail</th>
<th>directory</th></tr>
{% for f in s.hidden %}<tr class="known"><td>{{ f.op }}</td>
<td>{{ f.mode }} ({{ f.dtype | default("float64") }}, {{ f.transform | default("eager") }})</td>
<td>{{ f.kind }}</td>
<td>{{ f.known }}</td>
<td>{{ f.detail }}</td>
<td><code>{{ f.dir }}</code></td></tr>
{% endfor %}</table>{% endif %}
<h2>Known to the library ({{ s.known | length }})</h2>
<p>Failures in a mode that the library's own database marks as an expected failure or skip for this op,
or where the library documents its own semantics.</p>
{% if s.known %}<table><tr><th>op</th>
<th>mode</th>
<th>kind</th>
<th>the library says</th>
<th>occurrences</th>
<th>detail</th>
<th>directory</th></tr>
{% for f in s.known %}<tr class="known"><td>{{ f.op }}</td>
<td>{{ f.mode }} ({{ f.dtype | default("float64") }}, {{ f.transform | default("eager") }})</td>
<td>{{ f.kind }}</td>
<td>{{ f.known }}</td>
<td>{{ f.occurrences }}</td>
<td>{{ f.detail }}</td>
<td><code>{{ f.dir }}</code></td></tr>
{% endfor %}</table>{% else %}<p>None.</p>{% endif %}
{% if s.unconfirmed %}<h2>Not reproduced ({{ s.unconfirmed | length }})</h2>
<p>The sweep's check failed, but the finding's own repro.py (its own cotangent, direction and
differences) does not reproduce it: not counted as a bug.</p>
<table><tr><th>op</th>
<th>mode</th>
<th>kind</th>
<th>detail</th>
<th>repro.py said</th>
<th>directory</th></tr>
{% for f in s.unconfirmed %}<tr><td>{{ f.op }}</td>
<td>{{ f.mode }}</td>
<td>{{ f.kind }}</td>
<td>{{ f.detail }}</td>
<td><pre>{{ f.repro_output }}</pre></td>
<td><code>{{ f.dir }}</code></td></tr>
{% endfor %}</table>{% endif %}
{% if s.incidents %}<h2>Incidents ({{ s.incidents | length }})</h2><table><tr><th>op</th>
<th>what</th>
<th>detail</th></tr>
{% for i in s.incidents %}<tr><td>{{ i.op }}</td>
<td>{{ i.kind }}</td>
<td>{{ i.detail }}</td></tr>{% endfor %}
</table>{% endif %}
<h2>Every op and mode</h2>
<p>Each cell counts records by verdict (pass / fail / inconclusive / n/a,
then others); * marks a mode the op does not claim.</p>
<table><tr><th>op</th>{% for m in modes %}<th>{{ m }}</th>{% endfor %}</tr>
{% for op, row in s.ops.items() %}<tr><td>{{ op }}</td>
{% for m in modes %}{% set c = row.get(m, {}) %}
<td class="{{ cell_class(c) }}">{{ cell_text(c) }}</td>{% endfor %}</tr>
{% endfor %}</table>
</body></html>
"""

BAD = ("fail", "silent_zero", "silent_wrong", "error")


def cell_class(c: dict[str, int]) -> str:
    if not c:
        return "none"
    return "fail" if any(c.get(k) for k in BAD) else ("pass" if c.get("pass") else "")


def cell_text(c: dict[str, int]) -> str:
    if not c:
        return "-"
    main = f"{c.get('pass', 0)}/{c.get('fail', 0)}/{c.get('inconclusive', 0)}/{c.get('not_applicable', 0)}"
    rest = [f"{k} {v}" for k, v in sorted(c.items()) if k not in ("pass", "fail", "inconclusive", "not_applicable")]
    return main + (" " + ", ".join(rest) if rest else "")


def write_report(path: Path, summary: dict[str, Any]) -> None:
    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    summary = {"hidden": [], **summary}  # a summary of before issue #38 has none
    html = env.from_string(TEMPLATE).render(s=summary, modes=MODES, cell_class=cell_class, cell_text=cell_text)
    path.write_text(html)
