"""A models list that names one id under two names (a list that shifted under a rename, or a broken server): plan
and apply stop with one line naming the endpoint before any write. Before, the second row was dropped as a repeat,
so the model under its other name looked absent (a create) and, with --prune, the first name's model looked
undeclared."""

import copy

import pytest


@pytest.mark.parametrize("second_name", ["{name}-renamed", "{upper}", "{name} "])
def test_one_id_under_two_names_stops_before_any_write(gsg, fake, specs, monkeypatch, second_name):
    assert gsg("apply", str(specs), "--yes").code == 0
    before = copy.deepcopy(fake.models)
    original = fake._list

    def listed(items, query):
        items = list(items)
        if items and "name" in items[0] and "source" in items[0]:  # the models list
            first = items[0]
            items.append({**first, "name": second_name.format(name=first["name"], upper=first["name"].upper())})
        return original(items, query)

    monkeypatch.setattr(fake, "_list", listed)
    for command in (["plan", str(specs), "--prune"], ["apply", str(specs), "--yes", "--prune"]):
        result = gsg(*command)
        assert result.code == 1, result.out
        assert "GET /v2/models" in result.err and "is listed twice under different names (page 1): the list is " \
               "inconsistent; try again" in result.err
        assert "Traceback" not in result.err
    assert fake.models == before
