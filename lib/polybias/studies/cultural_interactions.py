"""Cultural interactions (notebook 07): seed 004's identity lists read from their files,
and the two-identity template over the planted vocabulary."""

from __future__ import annotations

import ast
import json
from pathlib import Path

from ..metrics.catbias import CatBiasError

SEED004_LISTS = {"Countries": "seed004-countries", "Languages": "seed004-languages", "Food": "seed004-dishes",
                 "Music": "seed004-genres", "Religion": "seed004-religions"}


def read_identity_list(path: str | Path) -> tuple[list[str], int, int]:
    """A seed-004 identity list: JSON object (its keys), Python list literal, or
    comma-separated text. Entries are stripped; empty entries are dropped and counted, and
    repeats are kept once (first occurrence).

    Returns (entries, n_raw, n_empty): the unique non-empty entries in file order, the
    number of raw entries, and how many of them were empty.
    """
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".json":
        raw = list(json.loads(text))
    elif text.lstrip().startswith("["):
        try:
            raw = list(ast.literal_eval(text))
        except (ValueError, SyntaxError) as exc:
            raise CatBiasError(f"{path.name}: malformed list literal ({exc})") from exc
    else:
        body = text.strip()
        raw = body.replace("\n", ",").split(",") if "," in body else body.splitlines()
    if not all(isinstance(x, str) for x in raw):
        raise CatBiasError(f"{path.name}: entries must be strings")
    stripped = [x.strip() for x in raw]
    n_empty = sum(1 for x in stripped if not x)
    return list(dict.fromkeys(x for x in stripped if x)), len(raw), n_empty


