"""What every campaign command shares, below `fuzz` and `sweep` alike: the pool of worker processes
with per-task deadlines (`pool`), how a worker leaves signals to the campaign (`signals`), live
progress and the end summary (`progress`), what `--out` may hold and its lock (`outdir`), the
checks of a resumed campaign's saved records (`state_check`), and `--scheduler` on Dask distributed:
reaching a cluster (`cluster`), a task's work in a child of the Dask worker (`cluster_worker`), and
the sweep's pool of one Dask task per op (`cluster_tasks`; fuzz batches programs in `fuzz.dask_pool`).
"""
