"""The static pass: libcst over the source, driven by the rule catalogue in rules/."""
from auditor.static.engine import FileResult, StaticEngine

__all__ = ["FileResult", "StaticEngine"]
