"""Static embedding files: word2vec text and binary, GloVe text, gensim ``.kv``
(pickle: only from a verified registered archive or with ``allow_pickle=True``), and the
``.npy`` cache of a registered archive's member. Used by :func:`polybias.models.load`.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np

from polybias import paths
from polybias.data import sources
from polybias.engines.static import StaticEmbeddings
from polybias.files import sha256_file, write_text_atomic

STATIC_FORMATS = ("word2vec-text", "word2vec-binary", "glove-text", "gensim-kv")


class StaticFileError(RuntimeError):
    """A static embedding file that cannot be read (re-raised as a StaticFileError)."""


def load_registered(name: str, entry: dict[str, Any], path: Path | None) -> StaticEmbeddings:
    """The static model of registry entry ``entry``: a member of a registered, verified
    archive (read once, then from the ``.npy`` cache) or the file ``path``."""
    fmt = entry.get("format")
    if "source" in entry:
        source = sources.get_source(entry["source"])
        folder = paths.cache_dir() / "models" / f"{name}-{source.sha256[:12]}"
        cached = _read_npy_cache(folder, name, revision=source.sha256)
        if cached is not None:
            return cached
        member = sources.extract_member(entry["source"], entry["member"])
        emb = read_file(member, fmt, name=name, allow_pickle=True, revision=source.sha256)
        _write_npy_cache(folder, emb)
        return emb
    return read_file(path, fmt, name=name, limit=entry.get("limit"),
                     allow_pickle=bool(entry.get("allow_pickle", False)))


def _read_npy_cache(folder: Path, name: str, revision: str) -> StaticEmbeddings | None:
    vec, voc = folder / "vectors.npy", folder / "vocab.txt"
    if not (vec.is_file() and voc.is_file()):
        return None
    words = voc.read_text(encoding="utf-8").split("\n")[:-1]
    return StaticEmbeddings(name, words, np.load(vec, allow_pickle=False), revision=revision)


def _write_npy_cache(folder: Path, emb: StaticEmbeddings) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / ".vectors.npy.tmp"
    with open(tmp, "wb") as fh:
        np.save(fh, emb.vectors, allow_pickle=False)
    write_text_atomic(folder / "vocab.txt", "".join(w + "\n" for w in emb.words))
    tmp.replace(folder / "vectors.npy")



def read_file(
    path: str | Path,
    fmt: str | None = None,
    name: str | None = None,
    limit: int | None = None,
    allow_pickle: bool = False,
    revision: str | None = None,
) -> StaticEmbeddings:
    """Read a static embedding file.

    Parameters
    ----------
    path : file to read.
    fmt : one of ``word2vec-text`` (optional ``n dim`` header), ``word2vec-binary``,
        ``glove-text`` (no header; words may contain spaces), ``gensim-kv`` (pickle:
        needs ``allow_pickle=True``). Guessed from the suffix when None.
    limit : read only the first ``limit`` words.
    revision : identifier recorded with results; the file's sha256 when None.

    Raises
    ------
    StaticFileError
        If ``path`` is missing or a directory, the format is unknown, a pickle is not
        allowed, or the file is malformed. A ``word2vec-text`` file with a header line
        ``count dim`` must hold exactly ``count`` rows of a word and ``dim`` numbers
        (all of them when ``limit`` is None, else the first ``limit``): a truncated
        file, an extra row or a row of another dimension is an error naming the file,
        the line and what was expected.
    """
    path = Path(path)
    if path.is_dir():
        raise StaticFileError(f"embedding path is a directory, not a file: {path}; expected one "
                         f"embedding file in one of the formats {', '.join(STATIC_FORMATS)}")
    if not path.is_file():
        raise StaticFileError(f"embedding file not found: {path}")
    fmt = fmt or _guess_format(path)
    if fmt not in STATIC_FORMATS:
        raise StaticFileError(f"{path}: unknown static format {fmt!r}; use one of {STATIC_FORMATS}")
    name = name or path.stem
    if fmt == "gensim-kv":
        if not allow_pickle:
            raise StaticFileError(
                f"{path}: gensim .kv files are pickles; load them only from a trusted source "
                "with allow_pickle=True"
            )
        words, vectors = _read_gensim_kv(path)
    elif fmt == "word2vec-binary":
        words, vectors = _read_word2vec_binary(path, limit)
    else:
        words, vectors = _read_text_vectors(path, limit, header=(fmt == "word2vec-text"))
    return StaticEmbeddings(name, words, vectors, revision=revision or sha256_file(path))


def _guess_format(path: Path) -> str:
    """Format of a static embedding file from its name (``.bin``, ``.kv``, ``glove``)."""
    suffix = path.suffix.lower()
    if suffix == ".bin":
        return "word2vec-binary"
    if suffix in (".kv", ".model"):
        return "gensim-kv"
    return "word2vec-text" if "glove" not in path.name.lower() else "glove-text"


def _read_text_vectors(path: Path, limit: int | None, header: bool) -> tuple[list[str], np.ndarray]:
    """Words and vectors of a text embedding file (word2vec text or GloVe).

    With ``header`` (word2vec text), a first line of two integers ``count dim`` is the
    header, and the rows are checked against it: each holds a word and exactly ``dim``
    numbers, and there are exactly ``count`` of them (or the first ``limit``). Without
    a header the dimension is that of the first row, and a row with fewer numbers is
    an error (words may contain spaces, as in GloVe 840B).
    """
    words: list[str] = []
    rows: list[np.ndarray] = []
    dim: int | None = None
    count: int | None = None
    lineno = 0
    with open(path, encoding="utf-8", errors="strict") as fh:
        for lineno, line in enumerate(fh, 1):
            parts = line.rstrip("\n\r").rstrip(" ").split(" ")
            if lineno == 1 and header and len(parts) == 2 and all(p.isdigit() for p in parts):
                count, dim = int(parts[0]), int(parts[1])
                if count < 1 or dim < 1:
                    raise StaticFileError(f"{path}:1: header declares {count} vectors of dimension "
                                     f"{dim}; expected positive numbers")
                continue
            if not line.strip():
                continue
            if count is not None and len(words) >= count:
                raise StaticFileError(f"{path}:{lineno}: a vector beyond the {count} that the header "
                                 f"(line 1: '{count} {dim}') declares")
            if dim is None:
                dim = _infer_dim(parts)
            if count is not None and _infer_dim(parts) != dim:
                raise StaticFileError(f"{path}:{lineno}: expected a word and {dim} numbers (the header "
                                 f"declares dimension {dim}), found {_infer_dim(parts)} numbers")
            if len(parts) < dim + 1:
                raise StaticFileError(f"{path}:{lineno}: expected a word and {dim} numbers, "
                                 f"found {len(parts)} fields")
            try:
                vec = np.asarray(parts[-dim:], dtype=np.float32)
            except ValueError as exc:
                raise StaticFileError(f"{path}:{lineno}: non-numeric vector component") from exc
            words.append(" ".join(parts[:-dim]))
            rows.append(vec)
            if limit is not None and len(words) >= limit:
                break
    if not words:
        raise StaticFileError(f"{path}: no vectors found")
    expected = count if limit is None or count is None else min(count, limit)
    if expected is not None and len(words) < expected:
        raise StaticFileError(f"{path}: the header (line 1: '{count} {dim}') declares {count} vectors, "
                         f"but the file ends after {len(words)} (line {lineno}): truncated?")
    return words, np.vstack(rows)


_NUM = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$")


def _infer_dim(parts: list[str]) -> int:
    """Number of trailing numeric fields (GloVe 840B has words with spaces)."""
    dim = 0
    for token in reversed(parts):
        if not _NUM.match(token):
            break
        dim += 1
    return dim if dim < len(parts) else dim - 1


def _read_word2vec_binary(path: Path, limit: int | None) -> tuple[list[str], np.ndarray]:
    with open(path, "rb") as fh:
        header = fh.readline().split()
        if len(header) != 2:
            raise StaticFileError(f"{path}: not a word2vec binary file (bad header)")
        n, dim = int(header[0]), int(header[1])
        n = min(n, limit) if limit else n
        vectors = np.empty((n, dim), dtype=np.float32)
        words: list[str] = []
        width = 4 * dim
        for i in range(n):
            chars = bytearray()
            while (ch := fh.read(1)) != b" ":
                if not ch:
                    raise StaticFileError(f"{path}: truncated at word {i}")
                if ch != b"\n":
                    chars += ch
            blob = fh.read(width)
            if len(blob) != width:
                raise StaticFileError(f"{path}: truncated vector at word {i}")
            vectors[i] = np.frombuffer(blob, dtype="<f4")
            words.append(chars.decode("utf-8", errors="replace"))
    return words, vectors


def _read_gensim_kv(path: Path) -> tuple[list[str], np.ndarray]:
    from gensim.models import KeyedVectors  # lazy: only gensim .kv files need it

    kv = KeyedVectors.load(str(path))
    return list(kv.index_to_key), np.asarray(kv.vectors, dtype=np.float32)
