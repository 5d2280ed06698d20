"""Lifecycle: ``lint`` (check and safely fix pages) and ``maintenance`` (decay, consolidation,
retention sweeps). Both read the repo through :mod:`.scan`; maintenance plans first (:mod:`.plan`,
pure) and then applies the plan in one commit (:mod:`.maintenance`).
"""

from .lint import LintReport, lint
from .maintenance import MaintenanceReport, maintenance
from .plan import MaintenancePlan
from .rules import LintIssue

__all__ = ["LintIssue", "LintReport", "MaintenancePlan", "MaintenanceReport", "lint", "maintenance"]
