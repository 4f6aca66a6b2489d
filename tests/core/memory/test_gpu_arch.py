import pytest

from gpustack_guard.core.memory.gpu_arch import below, compute_capability, major


@pytest.mark.parametrize("name,capability", [
    ("Tesla T4", (7, 5)), ("NVIDIA T1000 8GB", (7, 5)), ("Quadro RTX 6000", (7, 5)), ("NVIDIA TITAN RTX", (7, 5)),
    ("NVIDIA GeForce RTX 2080 Ti", (7, 5)), ("NVIDIA GeForce GTX 1660 SUPER", (7, 5)),
    ("Tesla V100-SXM2-32GB", (7, 0)), ("Tesla V100S-PCIE-32GB", (7, 0)), ("NVIDIA TITAN V", (7, 0)),
    ("Tesla P100-PCIE-16GB", (6, 0)), ("Tesla P40", (6, 1)), ("NVIDIA GeForce GTX 1080 Ti", (6, 1)),
    ("Tesla K80", (3, 7)),
    ("NVIDIA A100-SXM4-80GB", (8, 0)), ("NVIDIA A800 80GB PCIe", (8, 0)), ("NVIDIA A10G", (8, 6)),
    ("NVIDIA A10", (8, 6)), ("NVIDIA RTX A6000", (8, 6)), ("NVIDIA GeForce RTX 3090", (8, 6)),
    ("NVIDIA L4", (8, 9)), ("NVIDIA L40S", (8, 9)), ("NVIDIA RTX 6000 Ada Generation", (8, 9)),
    ("NVIDIA GeForce RTX 4090", (8, 9)), ("NVIDIA GeForce RTX 4050 Laptop GPU", (8, 9)),
    ("NVIDIA H100 80GB HBM3", (9, 0)), ("NVIDIA GH200 480GB", (9, 0)), ("NVIDIA H20", (9, 0)),
    ("NVIDIA B200", (10, 0)), ("NVIDIA GB10", (12, 1)), ("NVIDIA GeForce RTX 5090", (12, 0)),
    ("NVIDIA RTX PRO 6000 Blackwell Server Edition", (12, 0)),
    ("AMD Instinct MI300X", None), ("", None), ("Some Future GPU", None),
])
def test_compute_capability_by_name(name, capability):
    assert compute_capability(name) == capability
    assert major(name) == (capability[0] if capability else 0)  # 0: no engine's "major == N" takes it


def test_below_is_false_for_an_unknown_name():
    assert below("Tesla T4", (8, 0)) and below("Tesla V100-PCIE-16GB", (8, 0))
    assert not below("NVIDIA A100-SXM4-40GB", (8, 0))
    assert not below("", (8, 0)) and not below("AMD Instinct MI250X", (8, 0))
