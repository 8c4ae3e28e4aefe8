"""vllm_bootdiag: classify vLLM boot logs and plan the next launch."""
