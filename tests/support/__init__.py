"""What several test modules share: repository paths and the in-memory GPUStack (support.fake_gpustack)."""

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FLEET = REPO / "examples" / "fleet.yaml"
EXPORT_FIXTURE = REPO / "tests" / "fixtures" / "gpustack-2.3.0-export.yaml"  # a real 2.3.0 /export output
