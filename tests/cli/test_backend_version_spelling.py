"""backend_version spelled otherwise than gpustack-runner names releases (runner.py.json service_version: '0.11.0',
'0.5.4.post3'): GPUStack's image lookup filters on it exactly, so 'v0.11.0' or '0.11.0+cu128' finds no built-in
image. One GSG039 warning at the line, naming the runner's spelling; releases as the runner spells them, none."""

import pytest
from support import FLEET

SPEC = ("name: t\nsource: huggingface\nhuggingface_repo_id: meta-llama/Llama-3.1-8B-Instruct\n"
        "gpu_selector:\n  gpu_ids: [gpu-c:cuda:0]\nbackend: {backend}\nbackend_version: {version}\n"
        "backend_parameters: [--enforce-eager]\n")


@pytest.mark.parametrize("backend,version,written,spelled", [
    ("vLLM", "v0.11.0", "v0.11.0", "0.11.0"),
    ("vLLM", "V0.11.0", "V0.11.0", "0.11.0"),
    ("vLLM", "0.11.0+cu128", "0.11.0+cu128", "0.11.0"),
    ("vLLM", "' 0.11.0'", " 0.11.0", "0.11.0"),
    ("SGLang", "v0.5.2", "v0.5.2", "0.5.2"),
])
def test_a_release_spelled_otherwise_than_the_runners_is_a_warning(gsg, tmp_path, backend, version, written, spelled):
    (tmp_path / "spec.yaml").write_text(SPEC.format(backend=backend, version=version))
    result = gsg("validate", "spec.yaml", "--fleet", str(FLEET), "--offline", "--select", "GSG039", cwd=tmp_path)
    assert result.code == 0, result.out + result.err
    assert result.out.splitlines() == [
        f"spec.yaml:7:18: warning GSG039 backend-version-unset [t]: backend_version '{written}' is not spelled as "
        f"GPUStack's runners name releases ('{spelled}'): GPUStack looks the version up exactly, so it finds no "
        f"built-in image unless the backend's settings define '{written}'; gsg read it as {spelled}",
        f"    fix: write backend_version: '{spelled}'"], result.out


@pytest.mark.parametrize("backend,version", [("vLLM", "0.11.0"), ("vLLM", "0.10.1.1"), ("vLLM", "0.11.0rc1"),
                                             ("SGLang", "0.5.4.post3")])
def test_a_release_as_the_runners_spell_it_is_no_finding(gsg, tmp_path, backend, version):
    (tmp_path / "spec.yaml").write_text(SPEC.format(backend=backend, version=version))
    result = gsg("validate", "spec.yaml", "--fleet", str(FLEET), "--offline", "--select", "GSG039", cwd=tmp_path)
    assert result.code == 0 and result.err.startswith("gsg: 0 errors, 0 warnings, 0 notes in 1 spec"), result.err
    assert "GSG039" not in result.out, result.out
