"""Hover texts for the spec's JSON Schema (what an editor's YAML language server shows), per record and field.

Kept beside the records rather than inside them: the records are built on pydantic-core for start-up speed and
carry no metadata; the schema generator (schema.py) merges these in. tests/reporters/test_ci_kit.py fails when a
top-level or guard field has no text.
"""

from __future__ import annotations

TOP = {
    "name": "Model name in GPUStack; unique per cluster. gsg's ownership marker is keyed on it.",
    "cluster_name": "GPUStack cluster to deploy into (may be omitted when the fleet has one cluster).",
    "source": "Where the weights come from: huggingface, model_scope or local_path (each needs its id field).",
    "huggingface_repo_id": "Hugging Face repository id, org/name (not a URL).",
    "huggingface_filename": "One file of the repository, e.g. a GGUF quantisation (glob patterns allowed).",
    "model_scope_model_id": "ModelScope model id, org/name.",
    "model_scope_file_path": "One file of the ModelScope model, e.g. a GGUF quantisation.",
    "local_path": "Absolute path of the weights on the workers.",
    "description": "Free text shown in GPUStack's UI.",
    "replicas": "Instances to run; 0 parks the deployment (it books no GPU).",
    "categories": "GPUStack categories, e.g. [llm], [embedding].",
    "placement_strategy": "GPUStack's automatic placement: spread or binpack.",
    "cpu_offloading": "Allow layers on the CPU when VRAM is short (llama.cpp).",
    "distributed_inference_across_workers": "Allow one replica to span several workers.",
    "worker_selector": "Labels a worker must carry to be chosen (all must match).",
    "gpu_selector": "Pin the GPUs by id (worker:type:index); gsg checks memory on exactly these.",
    "gpu_type_selector": "Choose GPUs by accelerator type or a slice of one.",
    "backend": "Inference engine, spelled as GPUStack expects: vLLM, SGLang, llama-box, ... (case-sensitive).",
    "backend_version": "Engine version to run; gsg's arithmetic follows it (unset: GSG039 notes the assumption).",
    "backend_parameters": "Engine flags, one per item (--flag=value); validated against the engine and the template.",
    "image_name": "Container image for a custom backend.",
    "run_command": "Command line for a custom backend.",
    "native_anthropic_api": "Serve the Anthropic messages API natively.",
    "env": "Environment of the engine process; write secrets as ${NAME} to read them from gsg's environment.",
    "restart_on_error": "Let GPUStack restart an instance that fails.",
    "distributable": "Deprecated in GPUStack 2.x; leave it out.",
    "extended_kv_cache": "Spill the KV cache to CPU memory or a cache service.",
    "speculative_config": "Speculative decoding: algorithm, draft model and tokens per step.",
    "scaling_schedule": "Replica counts by cron schedule.",
    "generic_proxy": "Proxy requests to the engine as is.",
    "lora_list": "LoRA adapters served with the base model.",
    "roles": "Disaggregated serving roles of this deployment.",
    "disaggregation": "Prefill/decode disaggregation settings.",
    "gather": "Gather settings of a disaggregated deployment.",
    "enable_model_route": "Expose the model through GPUStack's model routes.",
    "guard": "gsg's own block, never sent to GPUStack: template, workload, policy, model facts.",
}

RECORDS = {
    "Guard": {
        "template": "Template in templates/ whose pinned flags the spec may not contradict (e.g. vllm-hardened).",
        "vars": "Variables the template reads; an unknown name is an error (did-you-mean).",
        "workload": "Expected traffic: sizes the KV check (max_num_seqs x p99 prompt + output).",
        "policy": "How strict the memory checks are.",
        "model": "Model facts that win over config.json, the hub and the built-in catalog.",
        "ollama": "Ollama-style aliases of llama.cpp flags.",
        "wave": "Apply order: lower waves first; a failing wave stops the ones after it.",
        "adopt": "Take over a live model of this name that gsg does not own yet.",
        "secrets": "Extra env names and --flags whose values are masked in every output (beyond the built-in rule).",
        "ignore_differences": "Parts another manager owns, never drift and kept live by apply: a field "
                              "(replicas), env.KEY or backend_parameters.--flag.",
    },
    "Policy": {
        "strict": "Every memory warning becomes an error.",
        "kv_oversubscription": "Severity of GSG033 (max_num_seqs x lengths above the KV pool).",
        "headroom": "Severity of GSG034 (memory outside the utilisation budget).",
        "assume_gpustack_max_model_len": "Evaluate an unset --max-model-len as GPUStack's worker injects it (8192).",
        "cuda_graph_reserve": "Bytes per GPU that replace gsg's CUDA-graph estimate (size with unit, e.g. 1.5GiB).",
        "activation_margin": "Extra fraction on the activation estimate (0.1 = +10 %).",
        "platform_footprint": "llama.cpp: VRAM the runtime itself takes per GPU (default 500MiB).",
    },
    "Workload": {
        "prompt_tokens_p99": "99th percentile prompt length in tokens.",
        "max_output_tokens": "Longest completion in tokens.",
        "concurrency": "Requests in flight at peak.",
        "mix": "Workloads sharing this pool (gsg advise writes it): GSG033 prices each at its own p99 length and "
               "peak, longest first, instead of every sequence at the longest request.",
    },
    "WorkloadShare": {
        "name": "The workload's name.",
        "prompt_tokens_p99": "99th percentile prompt length in tokens.",
        "max_output_tokens": "Longest completion in tokens.",
        "concurrency": "Requests of this workload in flight at its peak.",
    },
    "GPUSelector": {
        "gpu_ids": "GPU ids as GPUStack names them: worker:type:index, e.g. gpu-a:cuda:0.",
        "gpus_per_replica": "GPUs each replica takes from the listed ones.",
    },
    "Quantization": {
        "method": "fp8, int8, gptq, awq, bitsandbytes, mxfp4, gguf:<type>, bf16 or fp16.",
        "bits": "Bits per weight of the quantised linears.",
        "group_size": "Quantisation group size (-1: per channel).",
    },
    "ModelFactsOverride": {
        "catalog": "A built-in catalog name (gsg catalog lists them).",
        "config": "Path to a config.json, relative to the spec file.",
        "gguf": "Path to a GGUF file, relative to the spec file (its header is read).",
        "weight_bytes": "Measured size of the weights in bytes (wins over the computed size).",
        "max_position_embeddings": "Native context length before rope scaling.",
    },
}
