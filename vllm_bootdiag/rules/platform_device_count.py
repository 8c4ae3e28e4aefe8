"""Too few devices for the parallel layout: GPUs, Ray placement, CPU NUMA nodes.

vLLM's own world-size checks (config, executors, the Ray placement group) and the
CPU backend's one-worker-per-NUMA-node check. Example lines are rendered from
those format strings or taken from corpus logs.
"""

from __future__ import annotations

from .schema import Rule

_ENGINE = "(EngineCore_DP0 pid=4242) "
_DEVICES_REMEDY = (
    "The parallel layout needs more devices than this node shows: lower "
    "--tensor-parallel-size / --pipeline-parallel-size to fit the visible GPUs, or give "
    "the container more GPUs (check CUDA_VISIBLE_DEVICES)."
)
_NUMA = r"Allowed NUMA nodes are (?P<available>\[[^\]\n]{0,500}\])"
"""The CPU backend binds each worker to a NUMA node; `available` counts the list."""

RULES: tuple[Rule, ...] = (
    Rule(
        id="PF030",
        status="preview",
        name="world-size-over-gpus",
        vllm=">=0.13",
        outcome="insufficient_devices",
        literal="is larger than the number of available GPUs",
        source_pattern=r"World size \(\{\}\) is larger than the number of ",
        patterns=(
            r"World size \((?P<requested>\d+)\) is larger than the number of available GPUs "
            r"\((?P<available>\d+)\)",
        ),
        examples=(
            "  Value error, World size (4) is larger than the number of available GPUs (1) in "
            "this node. If this is intentional and you are using: [type=value_error, "
            "input_value=ArgsKwargs((), {...}), input_type=ArgsKwargs]",
            "ValueError: World size (2) is larger than the number of available GPUs (1) in this "
            "node. If this is intentional and you are using:",
        ),
        summary="tensor_parallel_size x pipeline_parallel_size is more than the GPUs on this node.",
        remediation=_DEVICES_REMEDY,
        references=(
            "vllm/config/parallel.py:564 (0.13.0)",
            "vllm/config/parallel.py:1052 (0.32.0)",
            "vllm/config/parallel.py:1071 (0.33.0)",
        ),
    ),
    Rule(
        id="PF031",
        status="preview",
        name="ray-placement-group-too-small",
        outcome="insufficient_devices",
        literal="exceeds the total number of available",
        source_pattern=r"The number of required \{\}s exceeds the total ",
        patterns=(
            r"The number of required \w+s exceeds the total number of available \w+s in the "
            r"placement group\. Required number of devices: (?P<requested>\d+)\. Total number "
            r"of devices: (?P<available>\d+)",
        ),
        examples=(
            "ValueError: The number of required GPUs exceeds the total number of available GPUs "
            "in the placement group. Required number of devices: 8. Total number of devices: 4.",
        ),
        summary="The Ray placement group has fewer devices than the world size.",
        remediation=_DEVICES_REMEDY,
        references=(
            "vllm/executor/ray_utils.py:329 (0.8.5)",
            "vllm/v1/executor/ray_utils.py:600 (0.32.0)",
            "vllm/v1/executor/ray_utils.py:351 (0.33.0)",
        ),
    ),
    Rule(
        id="PF032",
        status="preview",
        name="local-world-size-over-visible-devices",
        vllm=">=0.12,<0.24",
        outcome="insufficient_devices",
        literal="must be less than or equal to the number of visible devices",
        source_pattern=r"be less than or equal to the number of visible devices ",
        patterns=(
            r"local_world_size \((?P<requested>\d+)\) must be less than or equal to the number "
            r"of visible devices \((?P<available>\d+)\)",
        ),
        examples=(
            _ENGINE + "AssertionError: local_world_size (2) must be less than or equal to the "
            "number of visible devices (1).",
        ),
        summary="A worker's node-local world size is larger than its visible devices.",
        remediation=_DEVICES_REMEDY,
        references=(
            "vllm/v1/worker/gpu_worker.py:202 (0.12.0)",
            "vllm/v1/worker/gpu_worker.py:279 (0.23.0)",
        ),
    ),
    Rule(
        id="PF033",
        status="preview",
        name="tensor-parallel-over-local-gpus",
        vllm="<0.11",
        outcome="insufficient_devices",
        literal="to less than max local gpu count",
        patterns=(
            r"please set tensor_parallel_size \((?P<requested>\d+)\) to less than max local "
            r"gpu count \((?P<available>\d+)\)",
        ),
        examples=(
            "RuntimeError: please set tensor_parallel_size (4) to less than max local gpu count "
            "(2)",
        ),
        summary="The V0 multiprocessing executor: more tensor-parallel ranks than local GPUs.",
        remediation=_DEVICES_REMEDY,
        references=(
            "vllm/executor/mp_distributed_executor.py:41 (0.8.5)",
            "vllm/executor/mp_distributed_executor.py:42 (0.10.0)",
        ),
    ),
    Rule(
        id="PF034",
        status="preview",
        name="cpu-workers-over-numa-nodes",
        vllm=">=0.16,<0.18",
        outcome="insufficient_devices",
        literal="Not enough allowed NUMA nodes to bind threads of ",
        source_pattern=r"Not enough allowed NUMA nodes to bind threads of \{\} CPUWorkers\.",
        patterns=(
            r"Not enough allowed NUMA nodes to bind threads of (?P<requested>\d+) CPUWorkers\. "
            + _NUMA,
        ),
        examples=(
            _ENGINE + "AssertionError: Not enough allowed NUMA nodes to bind threads of 2 "
            "CPUWorkers. Allowed NUMA nodes are [0]. Please try to bind threads manually.",
        ),
        counter_examples=(
            "AssertionError: Not enough allowed NUMA nodes to bind threads of 2 local "
            "CPUWorkers. Allowed NUMA nodes are [0]. Please try to bind threads manually or "
            "decrease DP/TP/PP.",
        ),
        summary="CPU backend: more workers (TP x PP) than NUMA nodes to bind them to.",
        remediation="On the CPU backend each tensor/pipeline-parallel worker needs a NUMA node "
        "of its own: lower --tensor-parallel-size / --pipeline-parallel-size to the node count, "
        "or bind threads yourself (VLLM_CPU_OMP_THREADS_BIND).",
        references=(
            "vllm/v1/worker/cpu_worker.py:149 (0.16.0)",
            "vllm/v1/worker/cpu_worker.py:151 (0.17.0)",
        ),
    ),
    Rule(
        id="PF035",
        name="cpu-local-workers-over-numa-nodes",
        vllm=">=0.18",
        outcome="insufficient_devices",
        literal="Not enough allowed NUMA nodes to bind threads of ",
        source_pattern=r"Not enough allowed NUMA nodes to bind threads of \{\} local CPUWorkers\.",
        patterns=(
            r"Not enough allowed NUMA nodes to bind threads of (?P<requested>\d+) local "
            r"CPUWorkers\. " + _NUMA,
        ),
        examples=(
            _ENGINE + "AssertionError: Not enough allowed NUMA nodes to bind threads of 2 local "
            "CPUWorkers. Allowed NUMA nodes are [0]. Please try to bind threads manually or "
            "decrease DP/TP/PP.",
            # 0.18-0.19 (vllm/v1/worker/cpu_worker.py:166 in 0.18.0): no DP/TP/PP advice
            _ENGINE + "AssertionError: Not enough allowed NUMA nodes to bind threads of 2 local "
            "CPUWorkers. Allowed NUMA nodes are [0]. Please try to bind threads manually.",
        ),
        counter_examples=(
            "AssertionError: Not enough allowed NUMA nodes to bind threads of 2 CPUWorkers. "
            "Allowed NUMA nodes are [0]. Please try to bind threads manually.",
        ),
        summary="CPU backend: more local workers (TP x PP) than NUMA nodes to bind them to.",
        remediation="On the CPU backend each tensor/pipeline-parallel worker needs a NUMA node "
        "of its own: lower --tensor-parallel-size / --pipeline-parallel-size to the node count, "
        "or bind threads yourself (VLLM_CPU_OMP_THREADS_BIND).",
        references=(
            "vllm/v1/worker/cpu_worker.py:166 (0.18.0)",
            "vllm/v1/worker/cpu_worker.py:177 (0.19.0)",
            "vllm/utils/ompmultiprocessing.py:205 (0.20.0)",
            "vllm/utils/ompmultiprocessing.py:219 (0.32.0)",
            "vllm/utils/ompmultiprocessing.py:220 (0.33.0)",
        ),
    ),
    # --- tolerant tier: the message's core, for cut, wrapped or reworded text --------
    Rule(
        id="PF101",
        name="cpu-workers-over-numa-nodes-core",
        tier="tolerant",
        covers=("PF034", "PF035"),
        outcome="insufficient_devices",
        literal="Not enough allowed NUMA nodes to bind threads of",
        patterns=(
            r"Not enough allowed NUMA nodes to bind threads of (?P<requested>\d+)(?= )"
            r"(?: (?:local )?CPUWorkers\. " + _NUMA + r")?",
            r"Not enough allowed NUMA nodes to bind threads of",
        ),
        examples=(
            # PF035's corpus line (0.32.0) cut by a viewer inside the node list
            _ENGINE + "AssertionError: Not enough allowed NUMA nodes to bind threads of 2 local "
            "CPUWorkers. Allowed NUMA nodes are [0, …",
            # PF034's text, the paste stopping after the first sentence
            "AssertionError: Not enough allowed NUMA nodes to bind threads of 2 CPUWorkers.",
        ),
        counter_examples=("INFO 11-29 16:00:40 [cpu_worker.py:1] Allowed NUMA nodes are [0]",),
        summary="CPU backend: more workers than NUMA nodes to bind them to (the sentence's "
        "core, either release's wording; numbers where they survive).",
        remediation="On the CPU backend each tensor/pipeline-parallel worker needs a NUMA node "
        "of its own: lower --tensor-parallel-size / --pipeline-parallel-size to the node count, "
        "or bind threads yourself (VLLM_CPU_OMP_THREADS_BIND).",
        references=("vllm/utils/ompmultiprocessing.py:219 (0.32.0)",),
    ),
    Rule(
        id="PF102",
        name="ray-placement-group-too-small-core",
        tier="tolerant",
        covers=("PF031",),
        outcome="insufficient_devices",
        literal="exceeds the total number of available",
        patterns=(
            r"The number of required \w+s exceeds the total number of available(?: \w+s in the "
            r"placement group\. Required number of devices: (?P<requested>\d+)(?=\.)"
            r"(?:\. Total number of devices: (?P<available>\d+)(?=\.))?)?",
        ),
        examples=(
            # PF031's rendered text, the paste stopping after the first sentence
            "ValueError: The number of required GPUs exceeds the total number of available GPUs "
            "in the placement group.",
        ),
        counter_examples=(
            "ValueError: World size (8) is larger than the number of available GPUs (4) in this "
            "node.",
        ),
        summary="Ray's placement group holds fewer devices than the layout needs (the "
        "sentence's core; numbers where they survive).",
        remediation=_DEVICES_REMEDY,
        references=("vllm/v1/executor/ray_utils.py (PF031's message)",),
    ),
)
