"""UTF-16 and UTF-32 spec files, with and without a byte-order mark (round 21): one GSG019 naming the encoding.
Before, a UTF-32 file was called UTF-16 (its mark starts with UTF-16's) and one without a mark was a GSG001
'character U+0000 is not allowed in YAML' at 1:1."""

from __future__ import annotations

import pytest
from support import FLEET, REPO

SPEC = (REPO / "specs" / "llama-8b.yaml").read_text()


@pytest.mark.parametrize(("encoding", "said"), [
    ("utf-16", "UTF-16 text (it starts with a UTF-16 byte-order mark)"),
    ("utf-16-le", "UTF-16 text (no byte-order mark: a zero byte to each ASCII character)"),
    ("utf-16-be", "UTF-16 text (no byte-order mark: a zero byte to each ASCII character)"),
    ("utf-32", "UTF-32 text (it starts with a UTF-32 byte-order mark)"),
    ("utf-32-le", "UTF-32 text (no byte-order mark: three zero bytes to each ASCII character)"),
    ("utf-32-be", "UTF-32 text (no byte-order mark: three zero bytes to each ASCII character)"),
])
def test_a_wide_encoding_is_one_gsg019_naming_it(gsg, tmp_path, encoding, said):
    path = tmp_path / "a.yaml"
    path.write_bytes(SPEC.encode(encoding))
    result = gsg("validate", str(path), "--fleet", str(FLEET), "--offline")
    assert result.code == 1
    assert result.out.splitlines()[0] == \
        f"{path}:1:1: error GSG019 unreadable-file: cannot be read: {said}: save it as UTF-8"


@pytest.mark.parametrize("data", [b"\xef\xbb\xbf" + SPEC.encode(), b"a: 1\n", b"\n", b"x"])
def test_utf8_with_or_without_a_mark_and_short_files_are_not_wide(data):
    from gpustack_guard.adapters.files.spec_loader import decode

    assert decode(data) == data.decode("utf-8-sig")
