"""GSG039 beyond the values its cases name: spacing, case and a leading v are read as versions (and warned as
GPUStack's exact runner lookup misses them); moving tags in any case and spacing are not versions."""

import pytest
from rule_inputs import FLEET_1, LLAMA_8B, OK, run_stages

from gpustack_guard.core.rules import memory as M


def _messages(version):
    return [f.message for f in run_stages(OK | {"backend_version": version}, fleet=FLEET_1,
                                          facts=LLAMA_8B).findings(M.VERSION_UNSET)]


@pytest.mark.parametrize("version", ["0.11.0", "0.11", "0.11.0rc1", "0.11.0.post1"])
def test_a_readable_version_is_pinned(version):
    assert _messages(version) == []


@pytest.mark.parametrize("version", ["v0.11.0", " 0.11.0 "])
def test_a_leading_v_or_spacing_is_read_but_named_as_gpustack_looks_it_up(version):
    # gpustack-runner filters service_version with != (runner.py): 'v0.11.0' finds no built-in image
    assert _messages(version) == [
        f"backend_version '{version}' is not spelled as GPUStack's runners name releases ('0.11.0'): GPUStack looks "
        f"the version up exactly, so it finds no built-in image unless the backend's settings define '{version}'; "
        "gsg read it as 0.11.0"]


@pytest.mark.parametrize("version", ["Latest", "MAIN", " nightly ", "Stable", "head"])
def test_a_moving_tag_in_any_case_or_spacing_is_named_one(version):
    assert _messages(version) == [
        f"backend_version '{version}' is not a pinned version (a moving tag); gsg assumed 0.11.0, as for no version, "
        "for version-dependent arithmetic (CUDA-graph accounting, defaults), and GPUStack runs whatever it resolves "
        "to at deploy time"]


@pytest.mark.parametrize("version", ["   ", "\t"])
def test_a_blank_version_is_unpinned(version):
    assert _messages(version) == ["backend_version is not pinned; gsg assumed 0.11.0 for version-dependent arithmetic "
                                  "(CUDA-graph accounting, defaults)"]
