"""What every campaign command shares, below `fuzz` and `sweep` alike: the pool of worker processes
with per-task deadlines (`pool`), how a worker leaves signals to the campaign (`signals`), live
progress and the end summary (`progress`), what `--out` may hold and its lock (`outdir`), and the
checks of a resumed campaign's saved records (`state_check`).
"""
