"""A long text that remembers the pieces it was joined from, some of them the same str object many times (pure).

`validate -o json` at 10,000 specs writes ~100 MB, three quarters of it ~16 estimates' text repeated once per
spec (reporters/json_text.Shared). The passes every output goes through (the secret scrub, terminal_safe) look
at the text character by character, so over the joined text they did that work once per copy; over the pieces
each distinct piece is done once (issue 34, benchmarks/report_formats.py). A PiecedText is a str, so anything
that does not know about pieces reads the joined text as before.
"""

from __future__ import annotations

from typing import Callable, Iterable


class PiecedText(str):
    """The joined text; `pieces` holds what it was joined from (non-empty pieces, in order)."""

    pieces: tuple[str, ...]

    @classmethod
    def join(cls, pieces: Iterable[str]) -> PiecedText:
        kept = tuple(piece for piece in pieces if piece)
        text = cls("".join(kept))
        text.pieces = kept
        return text

    def boundaries(self) -> set[tuple[str, str]]:
        """(last character of a piece, first character of the next) at every place two pieces meet."""
        pieces = self.pieces
        return {(left[-1], right[0]) for left, right in zip(pieces, pieces[1:])}


def map_pieces(text: PiecedText, change: Callable[[str], str]) -> PiecedText:
    """`change` applied to each distinct piece once (by identity), the results joined in order: equal to
    change(text) whenever `change` maps a text piece by piece, which the caller must know. The text itself
    when no piece changed."""
    done: dict[int, str] = {}
    changed = False
    results = []
    for piece in text.pieces:
        result = done.get(id(piece))
        if result is None:
            result = done[id(piece)] = change(piece)
            changed = changed or result is not piece
        results.append(result)
    return PiecedText.join(results) if changed else text
