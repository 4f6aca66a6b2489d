"""The server's export answer must hold the deployments its list holds. Before, an empty 200 (a proxy that drops
bodies), a cut answer or one of another cluster's models was written as the export, with exit 0."""

import httpx
import pytest
import yaml


def _answers(fake, monkeypatch, change):
    original = fake._export

    def exported(body):
        docs = list(yaml.safe_load_all(original(body).text))
        return httpx.Response(200, text=change(docs), headers={"content-type": "application/x-yaml"})

    monkeypatch.setattr(fake, "_export", exported)


@pytest.mark.parametrize("change, message", [
    (lambda docs: "", "the export holds 0 of the 3 deployments GET /v2/models lists (missing: a, b, c)"),
    (lambda docs: yaml.safe_dump_all(docs[:2]), "the export holds 2 of the 3 deployments GET /v2/models lists "
                                                "(missing: c)"),
    (lambda docs: yaml.safe_dump_all(docs + [{**docs[0], "name": "z"}]),
     "the export holds deployments GET /v2/models does not list (z)"),
])
def test_an_export_that_is_not_the_listed_fleet_writes_nothing(gsg, fake, tmp_path, monkeypatch, change, message):
    for name in ("a", "b", "c"):
        fake.create_unmanaged(name)
    good = gsg("export", "--out", str(tmp_path / "good"))
    assert good.code == 0, good.err
    assert sorted(p.name for p in (tmp_path / "good").iterdir()) == ["a.yaml", "b.yaml", "c.yaml"]

    _answers(fake, monkeypatch, change)
    result = gsg("export", "--out", str(tmp_path / "out"))
    assert result.code == 1, result.err
    assert result.err.strip() == f"gsg: error: POST /v2/models/export: {message}; nothing was written, try again"
    assert not (tmp_path / "out").exists()


def test_many_missing_deployments_are_counted_not_all_named(gsg, fake, tmp_path, monkeypatch):
    for index in range(6):
        fake.create_unmanaged(f"m{index}")
    _answers(fake, monkeypatch, lambda docs: yaml.safe_dump_all(docs[:1]))
    result = gsg("export", "--out", str(tmp_path / "out"))
    assert result.err.strip() == ("gsg: error: POST /v2/models/export: the export holds 1 of the 6 deployments "
                                  "GET /v2/models lists (missing: m1, m2, m3 and 2 more); nothing was written, "
                                  "try again")


@pytest.mark.parametrize("body", ["<html><body>Sign in</body></html>", "\n  <!DOCTYPE html>\n<html>a: b</html>"])
def test_a_login_page_as_the_export_is_named_as_one(gsg, fake, tmp_path, monkeypatch, body):
    """Before: "document 0: field 'name' is missing or null, expected text"."""
    fake.create_unmanaged("a")
    monkeypatch.setattr(fake, "_export", lambda request: httpx.Response(200, text=body,
                                                                        headers={"content-type": "text/html"}))
    result = gsg("export", "--out", str(tmp_path / "out"))
    assert result.code == 1
    assert result.err.strip() == ("gsg: error: POST /v2/models/export: HTTP 200 but the body is an HTML page, not an "
                                  "export (is http://gpustack.test a GPUStack server?)")
    assert not (tmp_path / "out").exists()
