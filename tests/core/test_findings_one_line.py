from gpustack_guard.core.findings import Location, finding
from gpustack_guard.core.rules.documents import UNKNOWN_FIELD


def test_a_finding_message_is_one_line_whatever_the_spec_echoes():
    f = finding(UNKNOWN_FIELD, Location("s.yaml", 3, 1), "unknown field 'x\ny\tz\x00' (GPUStack would silently drop it)")
    assert f.message == "unknown field 'x\\ny\\tz\\x00' (GPUStack would silently drop it)"
    # letters stay as they are; an invisible space is shown by its code point (core/echo.py)
    assert finding(UNKNOWN_FIELD, Location("s.yaml"), "caf\u00e9 \u00a0nbsp").message == "caf\u00e9 \\u00a0nbsp"


def test_the_fix_and_spec_name_are_escaped_by_the_same_mechanism():
    f = finding(UNKNOWN_FIELD, Location("s.yaml"), "m", spec="a\nb", fix="use\x1b[31m x\r")
    assert (f.spec, f.fix) == ("a\\nb", "use\\x1b[31m x\\r")
