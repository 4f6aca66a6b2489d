"""conftest's xdist_group repair leans on pytest internals; without them it must change nothing."""

import sys

import pytest
from conftest import _group_where_pytest_reads


class _Item:
    def __init__(self, nodeid, group=None, with_id=True):
        self.nodeid = nodeid
        self._markers = [pytest.mark.xdist_group(group).mark] if group else []
        if with_id:
            self._id = nodeid

    def iter_markers(self, name):
        return iter([m for m in self._markers if m.name == name])


def test_a_grouped_test_gets_the_suffix_where_pytest_reads_it():
    grouped, plain = _Item("t.py::a", "soak"), _Item("t.py::b")
    _group_where_pytest_reads([grouped, plain])
    assert str(grouped._id) == "t.py::a@soak" and plain._id == "t.py::b"


def test_a_suffix_already_there_is_not_added_twice():
    item = _Item("t.py::a@soak", "soak")
    _group_where_pytest_reads([item])
    assert item._id == "t.py::a@soak"


def test_without_the_internals_nothing_changes(monkeypatch):
    no_id = _Item("t.py::a", "soak", with_id=False)
    _group_where_pytest_reads([no_id])
    assert not hasattr(no_id, "_id")
    monkeypatch.setitem(sys.modules, "_pytest.nodeid", None)  # a pytest without the module: ImportError
    item = _Item("t.py::a", "soak")
    _group_where_pytest_reads([item])
    assert item._id == "t.py::a"
