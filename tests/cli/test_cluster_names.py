"""Two clusters of one name (another organisation's, in a platform admin's view): the name -> id map gsg writes by
would be a guess. Before, the later id silently won, and with one cluster name the two were taken for one cluster,
so creates landed in whichever cluster the server listed last."""

import copy

import pytest


@pytest.mark.parametrize("command", [["plan"], ["apply", "--yes"], ["apply", "--yes", "--prune"], ["drift"]])
def test_two_clusters_of_one_name_stop_before_any_write(gsg, fake, specs, command):
    first = fake.clusters[0]
    for path in specs.glob("*.yaml"):  # every spec names its cluster: validation passes, the name is the guess
        if path.name != "gsg.yaml":
            path.write_text(f"cluster_name: {first['name']}\n" + path.read_text())
    second = fake.add_cluster(first["name"])
    before = copy.deepcopy(fake.models)
    result = gsg(command[0], str(specs), *command[1:])
    assert result.code == 1, result.out
    assert (f"GET /v2/clusters: 2 clusters are named '{first['name']}' (ids {first['id']}, {second}): gsg cannot tell "
            "which one a spec or a live model's cluster name means, and writes nothing") in result.err
    assert fake.models == before and "Traceback" not in result.err


@pytest.mark.parametrize("other", ["{name}-2", "{upper}", "{name} "])
def test_clusters_whose_names_differ_are_still_two_clusters(gsg, fake, specs, other):
    name = fake.clusters[0]["name"]
    fake.add_cluster(other.format(name=name, upper=name.upper()))
    result = gsg("plan", str(specs))
    assert "clusters are named" not in result.err
