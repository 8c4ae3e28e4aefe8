"""A platform's own rule, as a serving worker would write it in a `--rules FILE`: its
wrapper's disk-quota message (the worker's words, not vLLM's), shared by the tests of every
command that takes `--rules`."""

QUOTA = "worker: container disk quota exceeded (used 50 GiB of 50 GiB) writing /models"
QUOTA_RULE = {
    "id": "WK001",
    "name": "worker-disk-quota",
    "outcome": "disk_full",
    "literal": "container disk quota exceeded",
    "patterns": [r"container disk quota exceeded \(used [\d.]+ GiB of [\d.]+ GiB\)"],
    "examples": [QUOTA],
    "summary": "The platform's volume quota is full.",
    "remediation": "Give the worker a larger volume.",
}
