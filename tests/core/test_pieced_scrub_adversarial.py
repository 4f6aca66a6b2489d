"""An adversarial review of the piece-by-piece scrub (core/pieced.py, secrets._piecewise_exact): whatever the
pieces, the secrets and their shapes, scrub(PiecedText) is scrub(the joined text) byte for byte, and so is what
`gsg validate -o json` prints and writes. Beside test_pieced_scrub.py: every shape (token, secret, escaped,
URL-encoded, HTML-escaped, base64 core and run, cut to PREFIX_CHARS) split at every place by a meeting point,
masks touching across one, many secrets (the finder's gram grid), random JSON documents with shared values, and
the CLI end to end with the pieces and without them."""

from __future__ import annotations

import base64
import json
import random
import string

import pytest
import yaml
from support import REPO
from support.scrub_passes import count_scrub_passes

import gpustack_guard.core.secrets as secrets_module
import gpustack_guard.reporters.json_text as json_text
from gpustack_guard.core.echo import terminal_safe
from gpustack_guard.core.pieced import PiecedText
from gpustack_guard.core.secrets import MASK, PREFIX_CHARS, scrub
from gpustack_guard.reporters.json_text import Shared, indented

BODY = "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z0"  # built from parts: a literal token would trip secret scanners
TOKENS = (
    "hf" + "_" + BODY[:34],
    "sk" + "-" + BODY + "Zq9",
    "sk" + "-proj-" + BODY + "_-" + BODY[:10],
    "gh" + "p_" + BODY,
    "github" + "_pat_" + BODY + "_" + BODY,
    "xo" + "xb-" + "123456789012-" + BODY[:20],
    "AK" + "IA" + "ABCDEFGHIJ012345",
    "ey" + "JhbGciOiJIUzI1NiJ9.ey" + "JzdWIiOiIxMjM0In0.c2lnbmF0dXJl",
    "Bearer " + BODY[:20],
    "bearer\t~+/" + BODY[:16] + "==",
    "hf" + "_" + BODY[:12] + "\u2026",
    "sk" + "-" + BODY[:12] + "...",
    "gh" + "p_" + BODY[:12] + "\\u2026",
)
# secret values holding the report's own layout ('{', '}', ',', ' ', newline, quote), characters every encoding
# changes, non-ASCII (JSON's \\u escapes, UTF-8 percent runs, a surrogate pair) and base64's own characters
SECRETS = ("{x y}, z\n", 'p@ss/w"rd <&> 42', "s3cr3t-value-0123", "\u00e9\u20ac \U0001F600 ~~", "abcd",
           "  {}", ",\n  ]", "Zm9vOmJh+/==", "x" * 13)
# characters a meeting point may sit between: a report's layout, word characters, what token look-arounds and
# base64 runs test, non-ASCII
EDGES = ("", " ", "{", "}", ",", "\n", '"', "a", "0", "-", "_", "=", ".", "\\", "/", "+", "\u2026", "\u00e9")
EDGE_PAIRS = (("", ""), (" ", "}"), ("{", ","), ('"', '"'), ("a", "0"), ("-", "="), ("\\", "."), ("_", "+"),
              ("/", "\u2026"), ("\u00e9", "\n"))


def _atoms() -> list[str]:
    """Every text the scrub masks: the tokens, each secret's shapes and base64 cores, a Basic-auth run holding
    it, and each shape cut just past PREFIX_CHARS."""
    atoms = list(TOKENS)
    for secret in SECRETS:
        shapes, cores = secrets_module._shapes_of(secret)
        atoms += sorted(shapes) + sorted(cores)
        atoms.append(base64.b64encode(f"user:{secret}".encode()).decode())
        atoms += sorted(shape[:PREFIX_CHARS + 1] for shape in shapes if len(shape) > PREFIX_CHARS + 1)
    return list(dict.fromkeys(atoms))


ATOMS = _atoms()


def _same(pieces: list[str], secrets: list[str]) -> bool:
    text, joined = PiecedText.join(pieces), "".join(pieces)
    return all(scrub(text, secrets, shapes=shapes) == scrub(joined, secrets, shapes=shapes)
               for shapes in (True, False))


def _piecewise(pieces: list[str], secrets: list[str]) -> bool:
    """Whether scrub takes the piece-by-piece path for these pieces (at least two of them meet)."""
    text = PiecedText.join(pieces)
    wanted = frozenset(v for v in secrets if v and len(v) >= secrets_module.SHORTEST_SECRET)
    return len(text.pieces) > 1 and secrets_module._piecewise_exact(
        text.boundaries(), secrets_module._finder(wanted) if wanted else None)


def test_every_shape_cut_at_every_place_by_a_meeting_point_scrubs_as_the_joined_text():
    assert len(ATOMS) == 128
    checked = piecewise = 0
    for atom in ATOMS:
        for (left, right), secrets in zip(EDGE_PAIRS * 2, [[]] * len(EDGE_PAIRS) + [list(SECRETS)] * len(EDGE_PAIRS)):
            for cut in range(len(atom) + 1):
                pieces = [left + atom[:cut], atom[cut:] + right]
                assert _same(pieces, secrets), (pieces, secrets)
                checked += 1
                piecewise += _piecewise(pieces, secrets)
    # a cut inside a shape never goes piecewise where it could change a mask: these ran both ways
    assert (checked, piecewise) == (51_220, 1_134)


@pytest.mark.parametrize("before", EDGES)
def test_a_shape_beside_a_meeting_point_on_either_side_scrubs_as_the_joined_text(before):
    for atom in ATOMS:
        for after in EDGES:
            for secrets in ([], list(SECRETS)):
                assert _same([before + atom, after], secrets), (before, atom, after)
                assert _same([before, atom + after], secrets), (before, atom, after)
                assert _same([before, atom, after], secrets), (before, atom, after)


def test_two_masks_touching_where_pieces_meet_stay_one_mask_as_in_the_joined_text():
    heads = [atom for atom in ATOMS if len(atom) > 6][::3] + list(TOKENS)
    for first in heads:
        for second in heads:
            for between in ("", " ", "}", "\n"):
                pieces = ["{ " + first, between + second + " }"]
                for secrets in ([], list(SECRETS)):
                    assert _same(pieces, secrets), pieces
    joined = "{ " + SECRETS[2] + SECRETS[2] + " }"
    assert scrub(joined, [SECRETS[2]]) == "{ " + MASK + " }"  # one mask in the joined text ...
    assert scrub(PiecedText.join(["{ " + SECRETS[2], SECRETS[2] + " }"]), [SECRETS[2]]) == "{ " + MASK + " }"


def test_masks_touching_where_a_shared_estimate_starts_are_joined_piece_by_piece(monkeypatch):
    """A secret holding a space (the space before a shared estimate) beside one starting with '{' (the estimate's
    first character): the masks they touch with are one in the joined text, and one piece by piece too."""
    estimate = Shared({"source": "text", "n": 1})
    report = {"deployments": [{"name": f"svc-{i}", "estimate": estimate} for i in range(3)]}
    text = indented(report)
    secrets = ['"estimate": ', '{\n        "source"', "x y z w"]
    passes = count_scrub_passes(monkeypatch)
    shown = scrub(text, secrets)
    assert len(passes) == 5  # the shared estimate once and the four texts around its three places
    assert shown == scrub(str(text), secrets) and type(shown) is PiecedText
    assert shown.count(MASK) == 3 and f'"svc-0",\n      {MASK}: "text"' in shown
    passes.clear()
    chained = PiecedText.join(["a " + SECRETS[0], SECRETS[0], SECRETS[0] + " b"])  # a piece masked end to end
    assert scrub(chained, [SECRETS[0]]) == scrub(str(chained), [SECRETS[0]]) == f"a {MASK} b"
    assert len(passes) == 4  # three pieces, then the joined text


ALPHABET = string.ascii_letters + string.digits + "{}[],:\" \n\t=+/-_.~\\%&;#@?!'<>\u2026\u00e9\u2028\x1b\U0001F600"


def _random_case(rng: random.Random) -> tuple[list[str], list[str]]:
    """Secrets (none, a few, or many: over FIND_PROBES_MAX key heads the finder cuts the text into grams) and
    pieces cut at random places from text holding their shapes and tokens, with layout edges, repeated."""
    secrets = []
    for _ in range(rng.choice([0, 1, 3, 8, 20])):
        alphabet = rng.choice([ALPHABET, string.ascii_letters + string.digits, '{} \n,:"ab=', "ab+/=", "%&<>\"' ab"])
        secrets.append("".join(rng.choice(alphabet) for _ in range(rng.randint(4, 30))))
    bits = []
    for _ in range(rng.randint(1, 8)):
        kind = rng.random()
        if kind < 0.35 and secrets:
            secret = rng.choice(secrets)
            shapes = sorted(secrets_module._shapes_of(secret)[0])
            pick = rng.random()
            if pick < 0.4:
                bits.append(rng.choice(shapes))
            elif pick < 0.6:
                run = base64.b64encode(f"{'u' * rng.randint(0, 4)}:{secret}".encode()).decode()
                bits.append(run.replace("+", "-").replace("/", "_") if rng.random() < 0.5 else run)
            else:
                shape = rng.choice(shapes)
                bits.append(shape[:rng.randint(PREFIX_CHARS, max(PREFIX_CHARS, len(shape)))])
        elif kind < 0.55:
            bits.append(rng.choice(TOKENS))
        else:
            bits.append("".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 10))))
    raw = "".join(bits)
    cuts = sorted(rng.sample(range(len(raw) + 1), min(len(raw) + 1, rng.randint(0, 6))))
    pieces = [raw[a:b] for a, b in zip([0, *cuts], [*cuts, len(raw)])]  # empty ones too
    if rng.random() < 0.5:
        pieces = [rng.choice('{}[],:"\n ') + piece + rng.choice('{}[],:"\n ') for piece in pieces]
    if rng.random() < 0.5:
        pieces = [rng.choice(pieces) for _ in range(rng.randint(1, 8))]
    return pieces, secrets


def test_random_pieces_with_many_secrets_scrub_as_their_joined_text():
    rng = random.Random(2024)
    piecewise = gridded = 0
    for _ in range(2500):
        pieces, secrets = _random_case(rng)
        assert _same(pieces, secrets), (pieces, secrets)
        text, joined = PiecedText.join(pieces), "".join(pieces)
        assert terminal_safe(scrub(text, secrets)) == terminal_safe(scrub(joined, secrets))
        if _piecewise(pieces, secrets):
            piecewise += 1
            wanted = frozenset(v for v in secrets if len(v) >= secrets_module.SHORTEST_SECRET)
            gridded += bool(wanted) and len(secrets_module._finder(wanted).probes) > secrets_module.FIND_PROBES_MAX
    assert (piecewise, gridded) == (786, 219)  # both of the finder's ways ran piece by piece


def _random_document(rng: random.Random, shared: list[Shared], depth: int = 0) -> object:
    """A JSON value: containers (empty too), strings holding tokens, secrets, "\\0" (the writer's hole) and
    non-ASCII, numbers, and shared values placed anywhere, at any level."""
    kind = rng.random()
    if kind < 0.15 and shared:
        return rng.choice(shared)
    if depth < 4 and kind < 0.45:
        return {rng.choice(["a", "\0", "k\u00e9y", TOKENS[0], SECRETS[0], "n"]) + str(i): _random_document(
            rng, shared, depth + 1) for i in range(rng.randint(0, 4))}
    if depth < 4 and kind < 0.65:
        return [_random_document(rng, shared, depth + 1) for _ in range(rng.randint(0, 4))]
    return rng.choice([0, 1.5, True, None, "", "\0", '"\0', rng.choice(TOKENS), rng.choice(SECRETS),
                       "x " + rng.choice(SECRETS) + " y", "\x1b[31m\u202e"])


def test_random_documents_with_shared_values_are_json_dumps_and_scrub_as_their_joined_text():
    rng = random.Random(34)
    shared_pieces = 0
    for _ in range(400):
        values = [Shared(_random_document(rng, [])) for _ in range(rng.randint(0, 3))]
        doc = _random_document(rng, values)
        text = indented(doc, end="\n")
        assert text == json.dumps(doc, indent=2, default=lambda s: s.value) + "\n"
        assert type(text) is PiecedText and "".join(text.pieces) == text and all(text.pieces)
        shared_pieces += sum(any(piece is s.text(level) for s in values for level in s._texts) for piece in text.pieces)
        secrets = rng.sample(SECRETS, rng.randint(0, 3))
        for shapes in (True, False):
            shown = scrub(text, secrets, shapes=shapes)
            assert shown == scrub(str(text), secrets, shapes=shapes)
            assert terminal_safe(shown) == terminal_safe(str(shown))
    assert shared_pieces == 157


# ------------------------------------------------------------------------------------------------ end to end

EXAMPLE = REPO / "examples" / "positive"
FLEET = REPO / "examples" / "fleet.yaml"
REFERENCED = "referenced-secret-VALUE-42"  # a ${NAME} reference's value, from the process environment
PROCESS = "process-env-token-0123456789"   # a process env value named like a secret


class _Unpieced(str):
    """What json_text builds instead of a PiecedText: the joined text alone (the scrub before pieces)."""

    @classmethod
    def join(cls, pieces):
        return "".join(pieces)


def _specs(tmp_path, secret: str) -> None:
    """Twelve specs in two files sharing two estimates, with a literal secret env value, a `${NAME}` reference,
    a secret flag's value, and tokens in a plain flag, a description and a name."""
    docs = []
    for i in range(12):
        spec = {
            "name": f"svc-{i}" if i != 5 else f"svc.{TOKENS[0]}",  # after '-' it would be a word (_EDGE)
            "source": "huggingface", "huggingface_repo_id": "meta-llama/Llama-3.1-8B-Instruct",
            "description": f"owner {TOKENS[i % len(TOKENS)]}",
            "gpu_selector": {"gpu_ids": ["gpu-c:cuda:0"]},
            "backend": "vLLM", "backend_version": "0.11.0",
            "env": {"DB_PASSWORD": secret, "FROM_ENV": "${GSG_TEST_REFERENCED}"},
            # the secret as an item of its own: GPUStack's worker (2.2+) splits an item that starts with a flag
            # as a shell would, so `--hf-token=x {...}, y` would be three arguments (core/args.worker_tokens)
            "backend_parameters": ["--max-model-len=4096" if i % 2 else "--max-model-len=2048",
                                   "--hf-token", secret],
        }
        if i in (3, 7):
            spec["backend_parameters"].append(f"--max-num-seqs={TOKENS[i]}")  # echoed in GSG016, cut at 40
        docs.append(spec)
    (tmp_path / "a.yaml").write_text(yaml.safe_dump_all(docs[:6], sort_keys=False))
    (tmp_path / "b.yaml").write_text(yaml.safe_dump_all(docs[6:], sort_keys=False))


def _validate(gsg, tmp_path, tag: str):
    reports = {fmt: tmp_path / f"{tag}.{fmt}" for fmt in ("json", "sarif", "text")}
    result = gsg("validate", "a.yaml", "b.yaml", "--fleet", str(FLEET), "-o", "json",
                 *[arg for fmt, path in reports.items() for arg in ("--report", f"{fmt}={path}")], cwd=tmp_path)
    return result, {fmt: path.read_text() for fmt, path in reports.items()}


@pytest.mark.parametrize("secret, piecewise", [
    ("db-pass-" + BODY, True),               # nothing reaches a meeting point: shared estimates done once each
    ("x {" + BODY[:10] + "}, y", False),    # holds " {" and "}," where a shared estimate meets the layout
    ("}" + BODY[:10], True),                 # a mask may end on '}', but none starts with ',' or a newline
    (",\n" + BODY[:10] + "  {", False),
])
def test_validate_json_prints_and_writes_what_the_joined_texts_scrub_gives(gsg, tmp_path, monkeypatch, secret,
                                                                           piecewise):
    monkeypatch.setenv("GSG_TEST_REFERENCED", REFERENCED)
    monkeypatch.setenv("GSG_TEST_PROCESS_TOKEN", PROCESS)
    _specs(tmp_path, secret)
    passes = count_scrub_passes(monkeypatch)
    pieced, pieced_files = _validate(gsg, tmp_path, "pieced")
    json_passes = len(passes)
    monkeypatch.setattr(json_text, "PiecedText", _Unpieced)
    joined, joined_files = _validate(gsg, tmp_path, "joined")
    assert (pieced.code, pieced.out, pieced.err) == (joined.code, joined.out, joined.err)
    assert pieced_files == joined_files
    assert pieced_files["json"] == pieced.out
    # without pieces stdout, the three files and the summary line are one pass each; with them, where nothing
    # reaches a meeting point, stdout's and the JSON file's texts are scrubbed piece by piece
    assert len(passes) - json_passes == 5 and (json_passes > 5) is piecewise
    # piece by piece, stdout and the JSON file each took many passes; joined, one each

    deployments = json.loads(pieced.out)["deployments"]
    # svc-3 and svc-7 stop at their bad --max-num-seqs; the other ten share two estimates
    assert len(deployments) == 10 and all("estimate" in d for d in deployments)
    for shown in (pieced.out, pieced.err, *pieced_files.values()):
        for value in (secret, REFERENCED, PROCESS, *TOKENS[:8]):
            assert value[:PREFIX_CHARS] not in shown, value
        assert json.dumps(secret)[1:-1][:PREFIX_CHARS] not in shown
    assert MASK in pieced.out
