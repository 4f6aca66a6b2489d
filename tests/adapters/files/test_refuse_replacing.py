"""refuse_replacing_unless: the one check behind plan/render/snapshot --out, validate --report and soak --out."""

import pytest

from gpustack_guard.adapters.files.output import refuse_replacing_unless
from gpustack_guard.core.errors import GsgError


def _ours(text: str) -> bool:
    return text.startswith("gsg")


def test_nothing_yet_and_a_file_gsg_wrote_may_be_replaced(tmp_path):
    refuse_replacing_unless(tmp_path / "absent", _ours, "x", "y", max_bytes=64)
    (tmp_path / "mine").write_text("gsg wrote this")
    refuse_replacing_unless(tmp_path / "mine", _ours, "x", "y", max_bytes=64)


@pytest.mark.parametrize("content", [b"README", b"gsg" + b"x" * 100, b"gsg\xff", b""])
def test_another_file_a_too_large_or_non_utf8_one_is_refused_in_one_line(tmp_path, content):
    path = tmp_path / "f"
    path.write_bytes(content)
    with pytest.raises(GsgError) as refused:
        refuse_replacing_unless(path, _ours, "a gsg thing", "write it elsewhere", max_bytes=64)
    assert str(refused.value) == (f"{path}: exists and is not a gsg thing; refusing to overwrite it (remove it or write it "
                                  "elsewhere); nothing written") and refused.value.where == str(path)


def test_head_only_reads_the_opening_of_a_large_file_and_any_bytes(tmp_path):
    path = tmp_path / "report"
    path.write_bytes(b"\xef\xbb\xbfgsg" + b"\xff" * 10_000)
    seen = []
    refuse_replacing_unless(path, lambda head: seen.append(len(head)) or _ours(head), "x", "y", max_bytes=64,
                            head_only=True)
    assert seen == [61]  # 64 bytes read: the BOM's three dropped, the rest decoded with replacements


def test_a_check_that_raises_gsg_error_counts_as_not_ours(tmp_path):
    path = tmp_path / "plan.json"
    path.write_text("{}")

    def unreadable_plan(_text: str) -> bool:
        raise GsgError("not a plan")

    with pytest.raises(GsgError, match="exists and is not a plan"):
        refuse_replacing_unless(path, unreadable_plan, "a plan", "save it elsewhere", max_bytes=64)
