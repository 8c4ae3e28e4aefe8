"""Model files that are present but unusable: bad safetensors, bad config JSON, a class
vLLM could not import.

safetensors prints `Error while deserializing header: <reason>` (its Rust binding;
the reason was the error's Debug name, `HeaderTooLarge`, before 0.5 and is a
sentence since). transformers prints `It looks like the config file at '<path>'
is not a valid JSON file.` vLLM's model registry says an architecture it knows
`failed to be inspected` when importing the model class raised: not the same as
an architecture it does not implement.
"""

from __future__ import annotations

from .schema import Rule

_ENGINE = "(EngineCore_DP0 pid=4242) "
_FILES_REMEDY = (
    "A model file is truncated or corrupt (an interrupted download, a Git LFS pointer "
    "instead of the file, a disk that filled up): delete it from the cache (or the model "
    "directory) and download it again; check the checksums against the hub."
)

RULES: tuple[Rule, ...] = (
    Rule(
        id="MF001",
        status="preview",
        printed_by="safetensors",
        name="safetensors-header-unreadable",
        outcome="model_files_unreadable",
        literal="Error while deserializing header: ",
        patterns=(r"Error while deserializing header: (?P<detail>[^\n]{1,500})",),
        examples=(
            _ENGINE + "safetensors_rust.SafetensorError: Error while deserializing header: "
            "HeaderTooLarge",
            "safetensors_rust.SafetensorError: Error while deserializing header: header too large",
            "safetensors_rust.SafetensorError: Error while deserializing header: invalid JSON "
            "in header: EOF while parsing a value at line 1 column 0",
        ),
        summary="A .safetensors file does not start with a valid header (truncated, or not a "
        "safetensors file at all).",
        remediation=_FILES_REMEDY,
        references=(
            "safetensors bindings/python/src/lib.rs: 'Error while deserializing header: ' "
            "(strings in safetensors 0.8.0's _safetensors_rust.abi3.so)",
        ),
    ),
    Rule(
        id="MF002",
        printed_by="transformers",
        name="config-json-invalid",
        outcome="model_files_unreadable",
        literal="is not a valid JSON file",
        patterns=(
            r"It looks like the config file at '(?P<path>[^'\n]{1,1000})' is not a valid JSON "
            r"file",
        ),
        constants=(("detail", "config file is not valid JSON"),),
        examples=(
            _ENGINE + "OSError: It looks like the config file at '<models>/qwen3-8b/config.json' "
            "is not a valid JSON file.",
        ),
        summary="The model's config.json does not parse as JSON.",
        remediation="Fix or re-download the model's config.json (a partial download or a "
        "hand edit left it invalid).",
        references=(
            "transformers/configuration_utils.py:760 (4.57.6)",
            "transformers/configuration_utils.py:1032 (5.24.0)",
        ),
    ),
    Rule(
        id="MF003",
        status="preview",
        name="architecture-failed-to-be-inspected",
        outcome="architecture_inspection_failed",
        rank=40,
        literal="failed to be inspected",
        source_pattern=r"Model architectures \{\} failed ",
        patterns=(
            r"Model architectures (?P<architecture>\[[^\]\n]{0,500}\]) failed to be inspected",
        ),
        examples=(
            "ValueError: Model architectures ['Qwen3ForCausalLM'] failed to be inspected. Please "
            "check the logs for more details.",
            _ENGINE + "ValueError: Model architectures ['Gemma3ForConditionalGeneration'] failed "
            "to be inspected. Please check the logs for more details.",
        ),
        counter_examples=(
            "ValueError: Model architectures ['FooForCausalLM'] are not supported for now. "
            "Supported architectures: dict_keys(['LlamaForCausalLM'])",
        ),
        summary="vLLM supports the architecture but importing its model class raised (the "
        "cause is logged above: often a missing or mismatched dependency).",
        remediation="Read the error logged just before it (an ImportError, a missing "
        "package); fix that dependency or reinstall vLLM with the versions it pins.",
        references=(
            "vllm/model_executor/models/registry.py:415 (0.8.5)",
            "registry.py:1181 (0.32.0)",
            "registry.py:1225 (0.33.0)",
        ),
    ),
    Rule(
        id="MF004",
        printed_by="python",
        name="model-file-json-in-config-validation",
        vllm=">=0.11",
        outcome="model_files_unreadable",
        literal=" (char ",
        patterns=(
            r"Value error, (?P<detail>(?:Expecting value|Expecting ',' delimiter|Expecting ':' "
            r"delimiter|Expecting property name enclosed in double quotes|Unterminated string "
            r"starting at|Invalid control character at|Invalid \\escape|Extra data): line \d+ "
            r"column \d+ \(char \d+\))",
        ),
        examples=(
            "  Value error, Unterminated string starting at: line 1 column 32 (char 31) "
            "[type=value_error, input_value=ArgsKwargs((), {'model_config': ...}), "
            "input_type=ArgsKwargs]",
            "  Value error, Expecting value: line 1 column 1 (char 0) [type=value_error, "
            "input_value=ArgsKwargs((), {...}), input_type=ArgsKwargs]",
        ),
        counter_examples=(
            "json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)",
        ),
        summary="A JSON error while vLLM validates its config: it reads the model's "
        "safetensors headers there (get_safetensors_params_metadata), so a file cut inside "
        "its header fails here, naming no file.",
        remediation=_FILES_REMEDY,
        references=(
            "vllm/transformers_utils/utils.py parse_safetensors_file_metadata (json.loads of "
            "the header, 0.11.0-0.33.0)",
            "Python json.decoder.JSONDecodeError: '%s: line %d column %d (char %d)'",
        ),
    ),
)
