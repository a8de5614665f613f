"""The error of a campaign that cannot start or run, shared by the campaign and its pools."""

from __future__ import annotations


class CampaignError(Exception):
    """A campaign that cannot start or run (bad engine, nothing to resume, workers that die at start)."""
