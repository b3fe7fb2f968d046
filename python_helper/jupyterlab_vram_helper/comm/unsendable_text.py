"""Handles text with lone surrogates, which the kernel's messages cannot carry.

A Python ``str`` may hold a lone surrogate (a name made with ``globals()['\\ud800']``,
a JSON escape in a request); UTF-8 cannot encode one, so jupyter_client's packer
refuses the whole message, and a request would wait for its reply for ever. The
channel sends such a message again with U+FFFD in their place
(:func:`without_surrogates`), and :class:`ReplacedNames` keeps which names of a
listing the frontend saw changed: a delete of such a name is refused, since it
may read as another listed name (a real ``"\\ufffd"``).
"""

from __future__ import annotations

import collections
import re
from collections.abc import Sequence
from typing import Any

_SURROGATE = re.compile("[\ud800-\udfff]")
# The listings whose reply had names replaced, kept for their deletes (cleanup.py keeps 4 listings).
KEPT_REPLACED_LISTINGS = 8
# The reason a delete gives for a name as the frontend saw it after replacement: it
# may stand for another listed name, or for none (docs/protocol.md, delete).
REPLACED_NAME_REASON = "not in the listing: shown with other characters in place of ones that could not be sent"


def without_surrogates(value: Any, changed: set[str]) -> Any:
    """``value`` (a message) with the lone surrogates of its strings, dict keys
    included, replaced by U+FFFD, and a pair of them by the character it
    encodes; each string that changed goes into ``changed`` as replaced.

    Two keys that differ only in their surrogates both stay: the later one
    gets a number after it (nothing in a message is lost to the replacement).
    """
    if isinstance(value, str):
        if _SURROGATE.search(value) is None:
            return value
        clean = value.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
        changed.add(clean)
        return clean
    if isinstance(value, dict):
        out: dict[Any, Any] = {}
        for key, item in value.items():
            if isinstance(key, str):
                clean_key = without_surrogates(key, changed)
                if clean_key is not key:
                    candidate, number = clean_key, 1
                    while candidate in out or candidate in value:
                        number += 1
                        candidate = f"{clean_key} ({number})"
                    changed.add(candidate)
                    key = candidate
            out[key] = without_surrogates(item, changed)
        return out
    if isinstance(value, (list, tuple)):
        return [without_surrogates(item, changed) for item in value]
    return value


class ReplacedNames:
    """The names each recent listing showed changed, for its deletes."""

    def __init__(self) -> None:
        self._by_listing: collections.OrderedDict[str, frozenset[str]] = collections.OrderedDict()

    def note(self, result: Any) -> None:
        """Keep, for its deletes, the names of listing ``result`` that the frontend sees
        only with other characters in place of lone surrogates: U+FFFD where
        :func:`without_surrogates` replaces them, or, for U+DC80 to U+DCFF,
        whatever the reader makes of the bytes the packer's surrogateescape
        gives (U+FFFD, or a character those bytes happen to encode)."""
        entries = result.get("entries") if isinstance(result, dict) else None
        listing_id = result.get("listing_id") if isinstance(result, dict) else None
        if not isinstance(entries, list) or not isinstance(listing_id, str):
            return
        names = [e["name"] for e in entries if isinstance(e, dict) and isinstance(e.get("name"), str)]
        if _SURROGATE.search("".join(names)) is None:
            return  # In the common case no name has a surrogate, and one search is all it costs.
        shown: set[str] = set()
        for name in names:
            if without_surrogates(name, shown) is not name:
                try:
                    shown.add(name.encode("utf-8", "surrogateescape").decode("utf-8", "replace"))
                except UnicodeEncodeError:
                    # The surrogate is outside that range, so the packer refuses it, and the
                    # frontend sees only the U+FFFD form that without_surrogates added above.
                    pass
        self._by_listing[listing_id] = frozenset(shown)
        while len(self._by_listing) > KEPT_REPLACED_LISTINGS:
            self._by_listing.popitem(last=False)

    def split(self, listing_id: str, names: Sequence[str]) -> tuple[list[str], list[dict[str, str]]]:
        """``names`` of a delete of ``listing_id``: those to delete, and the refusals of those the
        frontend saw replaced (they name nothing exactly, and may read as another listed name)."""
        replaced = self._by_listing.get(listing_id)
        if not replaced:
            return list(names), []
        unsure = [name for name in dict.fromkeys(names) if name in replaced]
        kept = [name for name in names if name not in replaced]
        return kept, [{"name": name, "reason": REPLACED_NAME_REASON} for name in unsure]
