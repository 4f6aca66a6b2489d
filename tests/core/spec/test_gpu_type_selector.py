"""gpu_type_selector as GPUStack 2.3 takes it (schemas/models.py GPUTypeSelector): selectors that contradict each
other and slice settings that contradict themselves are findings at their line, never sent."""

from __future__ import annotations

import pytest

from gpustack_guard.adapters.files.yaml_documents import load_documents
from gpustack_guard.core.spec.check import SpecDoc, check_document

BASE = "name: sliced\nsource: huggingface\nhuggingface_repo_id: Qwen/Qwen2.5-7B-Instruct\n"


def _findings(text: str) -> list[tuple[str, int, str]]:
    doc = SpecDoc("s.yaml", 0, load_documents(BASE + text)[0])
    return [(f.rule_id, f.location.line, f.message) for f in check_document(doc)[1]]


@pytest.mark.parametrize("text", [
    "gpu_type_selector: {type: a100-pool}\n",
    "gpu_type_selector: {type: a100-pool, accelerator_sliced_memory_percentage: 50}\n",
    "gpu_type_selector: {type: a100-pool, accelerator_sliced_memory_percentage: 50, "
    "accelerator_sliced_cores_percentage: 30}\n",
    "gpu_type_selector: {type: a100-pool, accelerator_sliced_memory_percentage: 0, "
    "accelerator_sliced_cores_percentage: 0}\n",
    "gpu_type_selector: {type: a100-pool, accelerator_partitioned_profile: 1g.5gb}\n",
    "gpu_type_selector: {type: a100-pool}\ngpu_selector: {gpus_per_replica: 1}\n",
])
def test_what_gpustack_accepts_passes(text):
    assert _findings(text) == []


@pytest.mark.parametrize("text, line, says", [
    ("gpu_type_selector: {type: a100-pool}\ngpu_selector: {gpu_ids: [w1:cuda:0]}\n", 5,
     "gpu_selector.gpu_ids and gpu_type_selector contradict each other"),
    ("gpu_type_selector: {type: a100-pool}\ngpu_selector: {gpus_per_replica: 2}\n", 5,
     "gpus_per_replica 2 is constrained to 1"),
    ("gpu_type_selector: {type: p, accelerator_partitioned_profile: 1g.5gb, accelerator_sliced_memory_percentage: 20}\n",
     4, "a hardware partition profile and slice percentages contradict each other"),
    ("gpu_type_selector: {type: p, accelerator_sliced_cores_percentage: 40}\n", 4,
     "a sliced request needs accelerator_sliced_memory_percentage 1-100"),
    ("gpu_type_selector: {type: p, accelerator_sliced_memory_percentage: 0, accelerator_sliced_cores_percentage: 40}\n",
     4, "a sliced request needs accelerator_sliced_memory_percentage 1-100"),
    ("gpu_type_selector: {type: p, accelerator_sliced_memory_percentage: 40, accelerator_sliced_cores_percentage: 0}\n",
     4, "accelerator_sliced_cores_percentage 0 is only valid with memory 0"),
])
def test_contradictions_are_one_finding_at_their_line(text, line, says):
    found = _findings(text)
    assert len(found) == 1 and found[0][0] == "GSG002" and found[0][1] == line and says in found[0][2], found
