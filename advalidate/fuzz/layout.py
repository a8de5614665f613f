"""The name of the file that makes a directory a finding directory, shared by the writer
(`findings`, `campaign`) and the reader (`replay`, which `advalidate --help` loads, so it stays free
of the language and numpy at import)."""

from __future__ import annotations

FINDING_JSON = "finding.json"
