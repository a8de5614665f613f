"""Hypothesis' settings for the whole suite: nothing that depends on wall-clock time.

Every test already says `deadline=None` (tests/test_no_wall_clock.py checks it); the profile also
turns off the `too_slow` health check, which fails a test whose examples take long to generate,
as generated programs do on a machine loaded by other jobs (CONTRIBUTING.md, "Tests").
"""

from hypothesis import HealthCheck, settings

settings.register_profile("advalidate", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("advalidate")
