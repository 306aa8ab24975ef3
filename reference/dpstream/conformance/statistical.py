"""Statistical mode (placeholder until the audit engine lands)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dpstream.conformance.runner import ConformConfig, Task


def statistical_tasks(config: ConformConfig, anchor: str) -> list[Task]:
    return []
