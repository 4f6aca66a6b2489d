"""adapters/files/output.py: every sink is the last line of defence against raw terminal controls, and files
are written whole or not at all."""

import json
import os

import pytest

from gpustack_guard.adapters.files import output
from gpustack_guard.adapters.files.output import err, note, out, write_all_atomic, write_atomic, written_form
from gpustack_guard.core.secrets import MASK

RAW = "name\x1b[2J\x1b]0;t\x07\rover\x08\x9b\u202e\u2067\u200b"
SHOWN = "name\\u001b[2J\\u001b]0;t\\u0007\\u000dover\\u0008\\u009b\\u202e\\u2067\\u200b"


@pytest.fixture(autouse=True)
def _loud():
    output.set_quiet(False)
    yield
    output.set_quiet(False)


@pytest.mark.parametrize("sink", [out, err, note])
def test_no_sink_prints_controls_raw_and_layout_stays(capsys, sink):
    sink(f"first\tline {RAW}\nsecond line\n")
    captured = capsys.readouterr()
    assert (captured.out or captured.err) == f"first\tline {SHOWN}\nsecond line\n"


def test_json_on_stdout_stays_valid_and_exact(capsys):
    out(json.dumps({"name": RAW}, ensure_ascii=False) + "\n")
    printed = capsys.readouterr().out
    assert "\x1b" not in printed and "\u202e" not in printed and json.loads(printed) == {"name": RAW}


def test_secrets_are_scrubbed_before_escaping(capsys):
    out("key=s3cret-value\x1b[0m\n", ["s3cret-value"])
    assert capsys.readouterr().out == f"key={MASK}\\u001b[0m\n"


def test_a_written_file_holds_nothing_raw(tmp_path):
    path = tmp_path / "report.html"
    write_atomic(str(path), f"<p>{RAW}</p>\n")
    assert path.read_text(encoding="utf-8") == f"<p>{SHOWN}</p>\n" == written_form(f"<p>{RAW}</p>\n")


def test_several_files_are_written_all_or_none(tmp_path):
    first, blocked = tmp_path / "a.yaml", tmp_path / "not-a-folder"
    first.write_text("old\n")
    blocked.write_text("a file where a folder is needed\n")
    from gpustack_guard.core.errors import GsgError

    with pytest.raises(GsgError) as caught:  # one line naming the file (an OSError was an internal error)
        write_all_atomic([(str(first), "new\n"), (str(blocked / "b.yaml"), "b\n")])
    assert str(caught.value) == (f"{blocked / 'b.yaml'}: cannot write: its folder cannot be made (file exists: a "
                                 "file in the way?); nothing written")
    assert first.read_text() == "old\n"  # the first file was not replaced
    assert sorted(os.listdir(tmp_path)) == ["a.yaml", "not-a-folder"]  # and no temporary file is left


def test_several_files_are_all_written(tmp_path):
    write_all_atomic([(str(tmp_path / "a.yaml"), "a\n"), (str(tmp_path / "sub" / "b.yaml"), "b\n")])
    assert (tmp_path / "a.yaml").read_text() == "a\n" and (tmp_path / "sub" / "b.yaml").read_text() == "b\n"


def test_a_file_name_of_255_bytes_gets_a_temporary_name_that_fits(tmp_path):
    path = tmp_path / ("x" * 250 + ".yaml")
    write_atomic(str(path), "m\n")
    assert path.read_text() == "m\n"


class _Stream:
    def __init__(self, encoding):
        self.encoding = encoding


@pytest.mark.parametrize("encoding", ["utf-8", "UTF_8", "UTF8", "ascii", "us-ascii", "latin1", "ISO-8859-1", "cp1252",
                                      "utf-16", "UTF-32"])
def test_an_ascii_text_is_kept_as_it_is_for_an_encoding_that_holds_all_of_ascii(encoding):
    class NotEncoded(str):  # the 100 MB report is not encoded only to find that it encodes
        def encode(self, *args, **kwargs):
            raise AssertionError("encoded")
    text = NotEncoded("plain {report}\n" * 3)
    assert output._encodable(text, _Stream(encoding)) is text
    with pytest.raises(AssertionError, match="encoded"):  # another encoding is tried on the text
        output._encodable(text, _Stream("cp037"))


@pytest.mark.parametrize("encoding, text, shown", [
    ("ascii", "caf\u00e9", "caf\\xe9"),        # not ASCII: tried, escaped
    ("cp037", "plain", "plain"),                # an ASCII text, an encoding not in the list: tried, and it encodes
    ("no-such-codec", "plain", "plain"),        # a name Python does not know: left to the stream
    ("latin-1", "\u2603 snow", "\\u2603 snow"),
])
def test_any_other_text_or_encoding_is_tried_and_escaped_where_it_does_not_encode(encoding, text, shown):
    assert output._encodable(text, _Stream(encoding)) == shown
