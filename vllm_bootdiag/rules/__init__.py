"""The built-in rule table: every family module's rules.

`RULES` and `BY_ID` are the table as data (the CLI lists them, scan-source checks
them); classification reads a `RuleSet` (`default_rules()` unless a caller passes
its own), never these globals. The table is built with its checks deferred
(`schema.deferred_checks`: each rule taken as written, no validator built, no pattern
compiled): the test suite validates and verifies every rule, so a bad rule fails the
tests, and loading the table costs what its data does.

Adding a rule: append it to its family module (with examples), add a corpus
log that shows it, and a CHANGELOG line. Ids are never reused; a reworded
message gets a sibling rule and the old one's range is closed.
"""

from __future__ import annotations

from .ruleset import RuleFileError, RuleSet, default_rules, load_rules
from .schema import Rule, deferred_checks

with deferred_checks():
    from . import (
        config,
        cuda_memory,
        distributed,
        environment,
        free_memory_cpu,
        free_memory_gpu,
        install,
        kv_cache_no_memory,
        kv_cache_shortfall,
        lifecycle,
        lifecycle_echoes,
        model_access,
        model_files,
        platform_accelerator,
        platform_attention,
        platform_device_count,
    )

RULES: tuple[Rule, ...] = (
    *kv_cache_shortfall.RULES,
    *kv_cache_no_memory.RULES,
    *cuda_memory.RULES,
    *free_memory_gpu.RULES,
    *free_memory_cpu.RULES,
    *config.RULES,
    *model_access.RULES,
    *environment.RULES,
    *platform_accelerator.RULES,
    *platform_device_count.RULES,
    *platform_attention.RULES,
    *distributed.RULES,
    *install.RULES,
    *model_files.RULES,
    *lifecycle.RULES,
    *lifecycle_echoes.RULES,
)

BY_ID: dict[str, Rule] = {}
for _rule in RULES:
    if _rule.id in BY_ID:
        raise ValueError(f"duplicate rule id {_rule.id}")
    BY_ID[_rule.id] = _rule

__all__ = ["BY_ID", "RULES", "Rule", "RuleFileError", "RuleSet", "default_rules", "load_rules"]
