"""A live model whose name looks like a spec's but is not it (letter case, Unicode form, look-alike letters, spaces
around it): a server that lists names folded or re-normalised, or a model made by hand. Before, plan saw a new model
(create) and, with --prune, a model to delete: every apply deleted the running deployment and made another. Now both
are conflicts and nothing is written."""

import copy
import unicodedata

import pytest

NAME = "llama-8b"


def _looks(name: str) -> list[tuple[str, str]]:
    return [
        ("upper case", name.upper()),
        ("one capital", name.capitalize()),
        ("trailing space", name + " "),
        ("leading space", " " + name),
        ("Cyrillic a", name.replace("a", "\u0430")),
        ("fullwidth letters", name.replace("ll", "\uff4c\uff4c")),
    ]


@pytest.mark.parametrize("how, live_name", _looks(NAME), ids=[h for h, _ in _looks(NAME)])
def test_a_lookalike_live_name_is_a_conflict_and_prune_leaves_it(gsg, fake, specs, how, live_name):
    assert gsg("apply", str(specs), "--yes").code == 0
    model = fake.by_name(NAME)
    model["name"] = live_name  # the server now lists it under a name that looks the same
    before = copy.deepcopy(fake.models)
    plan = gsg("plan", str(specs), "--prune")
    assert plan.code == 1
    assert "the server lists no model of exactly this name but '" in plan.out
    assert f"(id {model['id']}), whose name differs only in letter case, Unicode form, look-alike letters or spaces " \
           "around it: gsg cannot tell whether it is this spec's model and creates, updates and deletes none of " \
           "them" in plan.out
    assert f"looks the same as the spec name '{NAME}': prune leaves it alone" in plan.out
    applied = gsg("apply", str(specs), "--yes", "--prune")
    assert applied.code == 1
    assert fake.models == before  # nothing created, updated or deleted
    assert "Traceback" not in applied.err + plan.err


def test_a_name_in_another_unicode_form_is_a_conflict(gsg, fake, specs):
    """A spec named in NFC, listed by the server in NFD (decomposed): the same letters to a reader."""
    text = (specs / "llama-8b.yaml").read_text()
    (specs / "llama-8b.yaml").write_text(text.replace(f"name: {NAME}", "name: llama-8b-caf\u00e9"))
    assert gsg("apply", str(specs), "--yes").code == 0
    model = fake.by_name("llama-8b-caf\u00e9")
    model["name"] = unicodedata.normalize("NFD", model["name"])
    before = copy.deepcopy(fake.models)
    assert gsg("apply", str(specs), "--yes", "--prune").code == 1
    assert fake.models == before


@pytest.mark.parametrize("live_name", [NAME + "-2", "llama-8", "llama-8b-old"])
def test_a_name_that_differs_visibly_is_still_created_and_pruned(gsg, fake, specs, live_name):
    assert gsg("apply", str(specs), "--yes").code == 0
    fake.by_name(NAME)["name"] = live_name
    plan = gsg("plan", str(specs), "--prune")
    assert "looks the same" not in plan.out and "differs only in letter case" not in plan.out
    assert gsg("apply", str(specs), "--yes", "--prune").code == 0
    assert fake.by_name(NAME) is not None and fake.by_name(live_name) is None


def test_a_lookalike_beside_the_exact_name_leaves_the_exact_one_managed(gsg, fake, specs):
    """The spec's exact name is live and updated as before; only the look-alike twin is kept from prune."""
    assert gsg("apply", str(specs), "--yes").code == 0
    exact = fake.by_name(NAME)
    twin = copy.deepcopy(exact) | {"id": 9999, "name": NAME.upper()}
    fake.models[9999] = twin
    plan = gsg("plan", str(specs), "--prune")
    assert f"looks the same as the spec name '{NAME}': prune leaves it alone" in plan.out
    assert "differs only in letter case" not in plan.out  # the spec itself has its exact model
    gsg("apply", str(specs), "--yes", "--prune")
    assert fake.models.get(9999) == twin and fake.by_name(NAME) is not None
