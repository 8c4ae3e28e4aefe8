"""Model access fatals: the model id, path, revision or permissions are wrong.

The hub's texts come from huggingface_hub and transformers, wrapped by vLLM's
own `Invalid repository ID or local directory specified` in newer releases.
"""

from __future__ import annotations

from .schema import Rule

_REPO = r"(?P<model>[\w.-]+/[\w.-]+)"

RULES: tuple[Rule, ...] = (
    Rule(
        id="AC001",
        name="invalid-repository-or-directory",
        vllm="",
        outcome="model_not_found",
        literal="Invalid repository ID or local directory specified",
        patterns=(r"Invalid repository ID or local directory specified: '(?P<model>[^']*)'",),
        examples=(
            "ValueError: Invalid repository ID or local directory specified: "
            "'some-org/does-not-exist'.",
        ),
        summary="No model by that id on the hub (or the cache, offline) and no such directory.",
        remediation="Check the model id or path; offline (HF_HUB_OFFLINE=1), download it into "
        "the cache first.",
        references=("vllm/transformers_utils/config.py:849 (0.32.0)",),
    ),
    Rule(
        id="AC002",
        printed_by="huggingface_hub",
        name="hub-repository-not-found",
        vllm="",
        outcome="model_not_found",
        literal="Repository Not Found",
        patterns=(
            r"Repository Not Found for url: https?://[^/\s]+/(?:api/models/)?" + _REPO,
            r"Repository Not Found",
        ),
        examples=(
            "huggingface_hub.errors.RepositoryNotFoundError: 404 Client Error. (Request ID: "
            "Root=1-0000) Repository Not Found for url: "
            "https://huggingface.co/api/models/some-org/nope/revision/main.",
        ),
        summary="The hub has no repository by that id (or it is private to others).",
        remediation="Check the model id; for a private repo, set HF_TOKEN with access.",
        references=("huggingface_hub RepositoryNotFoundError",),
    ),
    Rule(
        id="AC003",
        printed_by="huggingface_hub",
        name="hub-offline-not-cached",
        vllm="",
        outcome="model_not_found",
        literal="outgoing traffic has been disabled",
        patterns=(r"outgoing traffic has been disabled",),
        examples=(
            "huggingface_hub.errors.LocalEntryNotFoundError: Cannot find an appropriate cached "
            "snapshot folder for the specified revision on the local disk and outgoing traffic "
            "has been disabled. To enable repo look-ups and downloads online, set "
            "'HF_HUB_OFFLINE=0' as environment variable.",
        ),
        summary="Offline mode and the model is not in the local cache.",
        remediation="Download the model into the cache (or mount it) before starting offline.",
        references=("huggingface_hub LocalEntryNotFoundError",),
    ),
    Rule(
        id="AC004",
        printed_by="transformers",
        name="not-a-local-folder-or-model-id",
        vllm="",
        outcome="model_not_found",
        literal="is not a local folder and is not a valid model identifier",
        patterns=(r"(?P<model>\S+) is not a local folder and is not a valid model identifier",),
        examples=(
            "OSError: some-org/does-not-exist is not a local folder and is not a valid model "
            "identifier listed on 'https://huggingface.co/models'",
        ),
        summary="Neither a directory nor a model id the hub knows.",
        remediation="Check the model id or path.",
        references=("transformers utils/hub.py cached_file",),
    ),
    Rule(
        id="AC005",
        printed_by="huggingface_hub",
        name="gated-repository",
        vllm="",
        outcome="gated_model",
        literal="gated repo",
        patterns=(
            r"Cannot access gated repo for url https?://[^/\s]+/(?:api/models/)?" + _REPO,
            r"gated repo",
        ),
        examples=(
            "huggingface_hub.errors.GatedRepoError: 401 Client Error. (Request ID: Root=1-0) "
            "Cannot access gated repo for url "
            "https://huggingface.co/meta-llama/Llama-3.1-8B/resolve/main/config.json.",
        ),
        summary="The model is gated: the token has not been granted access.",
        remediation="Accept the model's terms on the hub with the token's account and set "
        "HF_TOKEN; restarting without that cannot help.",
        references=("huggingface_hub GatedRepoError",),
    ),
    Rule(
        id="AC006",
        printed_by="huggingface_hub",
        name="gated-access-restricted",
        vllm="",
        outcome="gated_model",
        literal="is restricted",
        patterns=(r"Access to model " + _REPO + r" is restricted",),
        examples=(
            "Access to model meta-llama/Llama-3.1-8B is restricted. You must have access to it "
            "and be authenticated to access it. Please log in.",
        ),
        summary="The model is gated or private and the request was not authorised.",
        remediation="Set HF_TOKEN for an account with access to the model.",
        references=(
            "the Hub server's X-Error-Message, appended by huggingface_hub utils/_http.py "
            "_format to GatedRepoError's text (2.4.0); not in transformers 5.x",
        ),
    ),
    Rule(
        id="AC007",
        printed_by="huggingface_hub",
        name="revision-not-found",
        vllm="",
        outcome="revision_not_found",
        literal="Revision Not Found",
        patterns=(
            r"Revision Not Found for url: https?://[^/\s]+/api/models/"
            + _REPO
            + r"/revision/(?P<revision>[^/\s.]+)",
            r"Revision Not Found",
        ),
        examples=(
            "huggingface_hub.errors.RevisionNotFoundError: 404 Client Error. (Request ID: Root=1) "
            "Revision Not Found for url: https://huggingface.co/api/models/Qwen/Qwen3-8B/revision/"
            "v9.",
        ),
        summary="The requested revision (branch, tag, commit) does not exist.",
        remediation="Fix --revision (or --tokenizer-revision / --code-revision).",
        references=("huggingface_hub RevisionNotFoundError",),
    ),
    Rule(
        id="AC008",
        printed_by="transformers",
        name="invalid-revision-id",
        vllm="",
        outcome="revision_not_found",
        literal="is not a valid git identifier",
        patterns=(r"(?P<revision>\S+) is not a valid git identifier",),
        examples=(
            "OSError: v9 is not a valid git identifier (branch name, tag name or commit id) that "
            "exists for this model name.",
        ),
        summary="The requested revision does not exist for this model.",
        remediation="Fix --revision.",
        references=("transformers utils/hub.py cached_file",),
    ),
    Rule(
        id="AC009",
        printed_by="huggingface_hub",
        name="hub-invalid-repo-id",
        vllm="",
        outcome="model_not_found",
        literal="Repo id must",
        patterns=(
            r"Repo id must be in the form 'repo_name' or 'namespace/repo_name': "
            r"'(?P<model>[^']*)'",
            r"Repo id must (?:use alphanumeric chars|not contain)[^:]*: '(?P<model>[^']*)'",
        ),
        examples=(
            "huggingface_hub.errors.HFValidationError: Repo id must be in the form 'repo_name' or "
            "'namespace/repo_name': '<models>/does-not-exist'. Use `repo_type` argument if needed.",
        ),
        summary="Neither an existing directory nor a valid hub id: usually a local path that "
        "does not exist (a missing volume mount), taken for a hub id.",
        remediation="Check the path exists inside the container (the volume is mounted) or fix "
        "the model id.",
        references=("huggingface_hub utils/_validators.py validate_repo_id",),
    ),
    # --- tolerant tier: the hub client's exception class, when only it survives -------
    Rule(
        id="AC101",
        name="gated-repo-error-class",
        tier="tolerant",
        covers=("AC005",),
        printed_by="huggingface_hub",
        outcome="gated_model",
        literal="GatedRepoError",
        patterns=(
            r"GatedRepoError: \d{3} Client Error\..*?for url: https?://[^/\s]+/(?:api/models/)?"
            + _REPO,
            r"\bGatedRepoError\b",
        ),
        examples=(
            "huggingface_hub.errors.GatedRepoError: 401 Client Error. (Request ID: Root=1-0)",
            "GatedRepoError: 403 Client Error. (Request ID: Root=1-0) for url: "
            "https://huggingface.co/meta-llama/Llama-3.1-8B/resolve/main/config.json",
        ),
        counter_examples=("huggingface_hub.errors.RepositoryNotFoundError: 404 Client Error.",),
        summary="The hub refused a gated model's files (the exception class alone).",
        remediation="Accept the model's terms on the hub with the token's account and set "
        "HF_TOKEN; restarting without that cannot help.",
        references=("huggingface_hub/errors.py: class GatedRepoError",),
    ),
    Rule(
        id="AC102",
        name="repository-not-found-error-class",
        tier="tolerant",
        covers=("AC002",),
        printed_by="huggingface_hub",
        outcome="model_not_found",
        literal="RepositoryNotFoundError",
        patterns=(r"\bRepositoryNotFoundError\b",),
        examples=("huggingface_hub.errors.RepositoryNotFoundError: 401 Client Error.",),
        counter_examples=("huggingface_hub.errors.RevisionNotFoundError: 404 Client Error.",),
        summary="The hub has no repository by that id, or the token cannot see it (the "
        "exception class alone).",
        remediation="Check the model id; for a private repo, set HF_TOKEN with access.",
        references=("huggingface_hub/errors.py: class RepositoryNotFoundError",),
    ),
    Rule(
        id="AC103",
        name="revision-not-found-error-class",
        tier="tolerant",
        covers=("AC007",),
        printed_by="huggingface_hub",
        outcome="revision_not_found",
        literal="RevisionNotFoundError",
        patterns=(r"\bRevisionNotFoundError\b",),
        examples=("huggingface_hub.errors.RevisionNotFoundError: 404 Client Error.",),
        counter_examples=("huggingface_hub.errors.RepositoryNotFoundError: 404 Client Error.",),
        summary="The repository has no such branch, tag or commit (the exception class alone).",
        remediation="Fix --revision (or --tokenizer-revision / --code-revision).",
        references=("huggingface_hub/errors.py: class RevisionNotFoundError",),
    ),
)
