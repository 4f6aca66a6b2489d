"""Bookings is a persistent map: every snapshot of the placement fold keeps its own values while later
snapshots share one history."""

import pytest

from gpustack_guard.core.fleet.placement import Bookings


def test_each_snapshot_keeps_its_values():
    zero = Bookings.zero(["a", "b", "c"])
    one = zero.plus({"a": 10})
    two = one.plus({"a": 5, "b": 7})
    three = two.plus({"c": 1})
    assert zero == {"a": 0, "b": 0, "c": 0}
    assert one == {"a": 10, "b": 0, "c": 0}
    assert two == {"a": 15, "b": 7, "c": 0}
    assert three == {"a": 15, "b": 7, "c": 1}
    assert [one["a"], two["a"], three["a"]] == [10, 15, 15]  # read after later bookings were appended
    assert len(three) == 3 and list(three) == ["a", "b", "c"]


def test_booking_from_an_older_snapshot_branches_without_touching_the_newer():
    zero = Bookings.zero(["a", "b"])
    one = zero.plus({"a": 10})
    two = one.plus({"a": 1})
    branch = one.plus({"b": 4})  # one is not the newest: it gets a history of its own
    assert branch == {"a": 10, "b": 4}
    assert two == {"a": 11, "b": 0} and one == {"a": 10, "b": 0}
    assert two.plus({"b": 2}) == {"a": 11, "b": 2}
    assert branch.plus({"a": 1}) == {"a": 11, "b": 4}


def test_an_unknown_gpu_raises_before_anything_is_booked():
    zero = Bookings.zero(["a"])
    with pytest.raises(KeyError):
        zero.plus({"a": 3, "z": 1})
    assert zero.plus({"a": 2}) == {"a": 2}  # the failed call appended nothing
    with pytest.raises(KeyError):
        zero["z"]
