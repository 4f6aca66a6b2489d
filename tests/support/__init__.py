"""What several test modules share: repository paths and the in-memory GPUStack (support.fake_gpustack)."""

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FLEET = REPO / "examples" / "fleet.yaml"
# a vLLM spec on two of examples/fleet.yaml's GPUs, its backend_parameters left to the test
TWO_GPU_VLLM_SPEC = """name: m
source: huggingface
huggingface_repo_id: meta-llama/Llama-3.1-8B-Instruct
replicas: 1
gpu_selector:
  gpu_ids: [gpu-c:cuda:0, gpu-c:cuda:1]
backend: vLLM
backend_version: 0.11.0
"""
EXPORT_FIXTURE = REPO / "tests" / "fixtures" / "gpustack-2.3.0-export.yaml"  # a real 2.3.0 /export output
