"""A small templating language for bias probes in languages with agreement.

Probe templates ("[MASK] are {prior}.") break in languages where the filled words must
agree with each other: a Greek adjective declines for the gender of the group it
describes (BehnamGhader & Milios 2022, seed 002 §3.3), a Hindi adjective or verb agrees
with the gender of its subject (Malik et al. 2022, seed 003 §2.1), and Bangla traits
need a different continuation (suffix or abstract noun) in each sentence structure
(Sadhu et al. 2024, seed 000 App. A.4, columns S1–S5). Here agreement is data:

* a **word list** holds entries; an entry has an ``id``, grammatical ``features``
  (``gender: fem``, ``number: pl`` …) and named ``forms`` (``nom``, ``fem``, ``noun`` …),
  each form a surface string or a list of **synonyms** (variants scored separately and
  averaged by the metrics);
* a **template** has a text with named slots ``{slot}`` (``{{``/``}}`` for literal
  braces) and, per slot, the list it draws from, its ``role`` (``target``: the group
  whose probability is compared; ``attribute``: the trait; ``context``: anything else)
  and the ``form`` to use. A form may name features of other slots: ``"{group.gender}"``
  is the **agreement rule** "use the form named after the gender of the entry in slot
  ``group``"; ``"{group.gender}.{group.number}"`` combines several.

A file (``data/templates/*.yaml``)::

    language: el
    citation: ...
    lists:
      groups:
        source: project-authored
        entries:
          - {id: men, features: {gender: masc}, forms: {nom: άντρες}}
          - {id: women, features: {gender: fem}, forms: {nom: γυναίκες}}
      traits:
        source: project-authored
        entries:
          - {id: violent, forms: {masc: βίαιοι, fem: βίαιες}}
          - {id: savage, forms: {masc: [άγριοι, βάρβαροι], fem: [άγριες, βάρβαρες]}}
    templates:
      - name: el_are
        set: gender_negative          # template set (metrics aggregate per set)
        text: "Οι {group} είναι {trait}."
        slots:
          group: {list: groups, form: nom, role: target}
          trait: {list: traits, form: "{group.gender}", role: attribute}

A bare string entry (``men``) or a list of strings (``[the US, the USA]``: synonyms) has
one unnamed form; slots without ``form`` use it. Everything is checked when the file is
read (words and texts are put in Unicode NFC, as Bangla and Devanagari matching needs),
and every error names the file and the template or list at fault: an unknown or
unused slot, an unknown list, a form an entry lacks for some agreeing entry, an empty
word, a duplicated id, more than one target slot, a cycle of agreement rules.
:func:`realise` fills one choice of entries (masking the slots asked for) and refuses a
placeholder left unfilled.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

from polybias import paths

ROLES = ("target", "attribute", "context")
#: Name of the form of bare-string entries (and of slots without ``form``).
DEFAULT_FORM = ""

_PLACEHOLDER = re.compile(r"\{\{|\}\}|\{([^{}]*)\}")
_FEATURE_REF = re.compile(r"\{(\w+)\.(\w+)\}")
_NAME = re.compile(r"^\w+$")


class TemplateError(ValueError):
    """A template file, template or filling is malformed; the message names it."""


@dataclass(frozen=True)
class Entry:
    """One word of a list: its forms (each a tuple of synonyms) and features."""

    id: str
    forms: dict[str, tuple[str, ...]]
    features: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class WordList:
    """A named list of entries and where it comes from."""

    name: str
    entries: tuple[Entry, ...]
    source: str = ""

    def entry(self, entry_id: str) -> Entry:
        for e in self.entries:
            if e.id == entry_id:
                return e
        raise TemplateError(f"list {self.name!r} has no entry {entry_id!r}; "
                            f"entries: {', '.join(e.id for e in self.entries)}")

    @property
    def ids(self) -> list[str]:
        return [e.id for e in self.entries]


@dataclass(frozen=True)
class Slot:
    """A placeholder of a template: the list it draws from, its form rule and role."""

    name: str
    list: str
    form: str = DEFAULT_FORM
    role: str = "context"

    @property
    def depends_on(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(m.group(1) for m in _FEATURE_REF.finditer(self.form)))


@dataclass(frozen=True)
class Template:
    """A template: text with ``{slot}`` placeholders and its slots."""

    name: str
    text: str
    slots: dict[str, Slot]
    set: str
    language: str = ""
    file: str = ""

    def role(self, role: str) -> list[str]:
        """Names of the slots with ``role``."""
        return [s.name for s in self.slots.values() if s.role == role]

    def the(self, role: str) -> str:
        """The one slot with ``role``; none or several is an error naming the template."""
        found = self.role(role)
        if len(found) != 1:
            raise TemplateError(f"template {self.name!r} ({self.file}) needs exactly one {role} "
                                f"slot, has {len(found)}: {found}")
        return found[0]


@dataclass(frozen=True)
class TemplateBook:
    """The word lists and templates of one file."""

    language: str
    lists: dict[str, WordList]
    templates: dict[str, Template]
    citation: str = ""
    file: str = ""

    def template(self, name: str) -> Template:
        if name not in self.templates:
            raise TemplateError(f"{self.file}: no template {name!r}; defined: {', '.join(self.templates)}")
        return self.templates[name]

    def sets(self) -> dict[str, list[Template]]:
        """Templates grouped by their ``set``, in file order."""
        out: dict[str, list[Template]] = {}
        for t in self.templates.values():
            out.setdefault(t.set, []).append(t)
        return out


@dataclass(frozen=True)
class Filled:
    """One realised sentence.

    ``choice`` maps each slot to the entry id used; ``words`` to the surface string put
    there (the mask token for masked slots); ``spans`` to its character span in ``text``;
    ``variant`` numbers the synonym combination (0 when no slot has synonyms).
    """

    template: str
    text: str
    choice: dict[str, str]
    words: dict[str, str]
    spans: dict[str, tuple[int, int]]
    masked: tuple[str, ...] = ()
    variant: int = 0


# ---------------------------------------------------------------- parsing

def _surfaces(value: object, where: str) -> tuple[str, ...]:
    values = value if isinstance(value, list) else [value]
    if not values:
        raise TemplateError(f"{where}: empty list of synonyms")
    out = []
    for v in values:
        if not isinstance(v, str) or not v.strip():
            raise TemplateError(f"{where}: empty or non-text word {v!r}")
        if "{" in v or "}" in v:
            raise TemplateError(f"{where}: word {v!r} contains a brace (an unfilled placeholder?)")
        out.append(unicodedata.normalize("NFC", v.strip()))
    return tuple(out)


def _entry(raw: object, where: str) -> Entry:
    if isinstance(raw, str | list):
        forms = {DEFAULT_FORM: _surfaces(raw, where)}
        return Entry(id=forms[DEFAULT_FORM][0], forms=forms)
    if not isinstance(raw, dict):
        raise TemplateError(f"{where}: an entry must be a word, a list of synonyms or a mapping, "
                            f"got {type(raw).__name__}")
    unknown = sorted(set(raw) - {"id", "forms", "features", "word"})
    if unknown:
        raise TemplateError(f"{where}: unknown entry key(s) {unknown}")
    if "word" in raw and "forms" in raw:
        raise TemplateError(f"{where}: give either 'word' or 'forms', not both")
    if "word" in raw:
        forms = {DEFAULT_FORM: _surfaces(raw["word"], where)}
    else:
        rf = raw.get("forms")
        if not isinstance(rf, dict) or not rf:
            raise TemplateError(f"{where}: entry needs 'word' or a non-empty 'forms' mapping")
        forms = {str(k): _surfaces(v, f"{where} form {k!r}") for k, v in rf.items()}
    feats = raw.get("features") or {}
    if not isinstance(feats, dict):
        raise TemplateError(f"{where}: 'features' must be a mapping")
    eid = raw.get("id", next(iter(forms.values()))[0])
    if not isinstance(eid, str) or not eid.strip():
        raise TemplateError(f"{where}: empty entry id")
    return Entry(id=eid, forms=forms, features={str(k): str(v) for k, v in feats.items()})


def _word_list(name: str, raw: object, where: str) -> WordList:
    where = f"{where}: list {name!r}"
    if isinstance(raw, list):
        raw = {"entries": raw}
    if not isinstance(raw, dict) or not isinstance(raw.get("entries"), list) or not raw["entries"]:
        raise TemplateError(f"{where} needs a non-empty 'entries' list")
    entries = tuple(_entry(e, f"{where} entry {i}") for i, e in enumerate(raw["entries"]))
    ids = [e.id for e in entries]
    dups = sorted({i for i in ids if ids.count(i) > 1})
    if dups:
        raise TemplateError(f"{where} repeats entry id(s) {dups}")
    return WordList(name=name, entries=entries, source=str(raw.get("source", "")))


def placeholders(text: str) -> list[str]:
    """Slot names in ``text`` in order of appearance (``{{``/``}}`` are literal braces).

    >>> placeholders("Why are {group} always so {trait}? {{not a slot}}")
    ['group', 'trait']
    """
    return [m.group(1) for m in _PLACEHOLDER.finditer(text) if m.group(1) is not None]


def _order(t: Template) -> list[str]:
    """Slots in dependency order (a slot after those its form refers to); cycles raise."""
    done: list[str] = []
    visiting: set[str] = set()

    def visit(name: str, chain: tuple[str, ...]) -> None:
        if name in done:
            return
        if name in visiting:
            raise TemplateError(f"template {t.name!r}: agreement rules form a cycle "
                                f"{' -> '.join((*chain, name))}")
        visiting.add(name)
        for dep in t.slots[name].depends_on:
            visit(dep, (*chain, name))
        visiting.discard(name)
        done.append(name)

    for name in t.slots:
        visit(name, ())
    return done


def _template(raw: object, i: int, lists: dict[str, WordList], language: str, file: str) -> Template:
    if not isinstance(raw, dict):
        raise TemplateError(f"{file}: template {i} must be a mapping")
    name = raw.get("name")
    if not isinstance(name, str) or not _NAME.match(name):
        raise TemplateError(f"{file}: template {i} needs a 'name' (letters, digits, _), got {name!r}")
    where = f"{file}: template {name!r}"
    text = raw.get("text")
    if not isinstance(text, str) or not text.strip():
        raise TemplateError(f"{where} has no text")
    rslots = raw.get("slots")
    if not isinstance(rslots, dict) or not rslots:
        raise TemplateError(f"{where} declares no slots")
    slots = {}
    for sname, s in rslots.items():
        if isinstance(s, str):
            s = {"list": s}
        if not isinstance(s, dict) or "list" not in s:
            raise TemplateError(f"{where}: slot {sname!r} needs a 'list'")
        unknown = sorted(set(s) - {"list", "form", "role"})
        if unknown:
            raise TemplateError(f"{where}: slot {sname!r} has unknown key(s) {unknown}")
        if s["list"] not in lists:
            raise TemplateError(f"{where}: slot {sname!r} draws from unknown list {s['list']!r}; "
                                f"lists: {', '.join(lists)}")
        role = s.get("role", "context")
        if role not in ROLES:
            raise TemplateError(f"{where}: slot {sname!r} has role {role!r}; roles: {ROLES}")
        slots[str(sname)] = Slot(str(sname), s["list"], str(s.get("form", DEFAULT_FORM)), role)
    used = placeholders(text)
    unknown = [p for p in dict.fromkeys(used) if p not in slots]
    if unknown:
        raise TemplateError(f"{where}: the text uses unknown slot(s) {unknown}; declared: {list(slots)}")
    unused = [s for s in slots if s not in used]
    if unused:
        raise TemplateError(f"{where}: slot(s) {unused} are declared but not in the text")
    twice = sorted({p for p in used if used.count(p) > 1})
    if twice:
        raise TemplateError(f"{where}: slot(s) {twice} appear more than once in the text")
    text = unicodedata.normalize("NFC", text)
    t = Template(name=name, text=text, slots=slots, set=str(raw.get("set", name)),
                 language=language, file=file)
    if len(t.role("target")) > 1:
        raise TemplateError(f"{where} has {len(t.role('target'))} target slots "
                            f"{t.role('target')}; one is expected")
    for s in slots.values():
        for dep in s.depends_on:
            if dep not in slots or dep == s.name:
                raise TemplateError(f"{where}: slot {s.name!r} agrees with unknown slot {dep!r}")
    _order(t)
    _check_forms(t, lists)
    return t


def _check_forms(t: Template, lists: dict[str, WordList]) -> None:
    """Every entry of every slot has the form its rule asks for, for every agreeing entry."""
    for s in t.slots.values():
        deps = s.depends_on
        combos = itertools.product(*(lists[t.slots[d].list].entries for d in deps)) if deps else [()]
        for combo in combos:
            form = _form_name(t, s, dict(zip(deps, combo, strict=True)))
            for e in lists[s.list].entries:
                if form not in e.forms:
                    have = ", ".join(repr(f) for f in e.forms)
                    raise TemplateError(
                        f"{t.file}: template {t.name!r}: entry {e.id!r} of list {s.list!r} has no "
                        f"form {form!r} (slot {s.name!r}); it has {have}")


def _form_name(t: Template, s: Slot, chosen: dict[str, Entry]) -> str:
    def sub(m: re.Match) -> str:
        other, feature = m.group(1), m.group(2)
        e = chosen[other]
        if feature not in e.features:
            raise TemplateError(f"{t.file}: template {t.name!r}: slot {s.name!r} agrees with the "
                                f"{feature!r} of slot {other!r}, but entry {e.id!r} of list "
                                f"{t.slots[other].list!r} has no feature {feature!r}")
        return e.features[feature]

    return _FEATURE_REF.sub(sub, s.form)


def parse_templates(raw: object, file: str = "<templates>") -> TemplateBook:
    """Validate a parsed template file (see the module docstring for its shape)."""
    if not isinstance(raw, dict) or not isinstance(raw.get("lists"), dict) \
            or not isinstance(raw.get("templates"), list):
        raise TemplateError(f"{file}: expected a mapping with 'lists:' and 'templates:'")
    language = str(raw.get("language", ""))
    lists = {str(n): _word_list(str(n), v, file) for n, v in raw["lists"].items()}
    templates: dict[str, Template] = {}
    for i, t in enumerate(raw["templates"]):
        tpl = _template(t, i, lists, language, file)
        if tpl.name in templates:
            raise TemplateError(f"{file}: template name {tpl.name!r} is used twice")
        templates[tpl.name] = tpl
    if not templates:
        raise TemplateError(f"{file}: no templates")
    return TemplateBook(language=language, lists=lists, templates=templates,
                        citation=str(raw.get("citation", "")), file=file)


def load_templates(file: str | Path) -> TemplateBook:
    """Read and validate a template file; a bare name is looked up in ``data/templates``."""
    path = Path(file)
    if not path.suffix:
        path = paths.data_dir() / "templates" / f"{file}.yaml"
    elif not path.is_absolute() and not path.exists():
        path = paths.data_dir() / "templates" / path
    raw = paths.read_yaml(path, TemplateError, "template file")
    return parse_templates(raw, file=path.name)


# ---------------------------------------------------------------- realising

def realise(book: TemplateBook, template: str | Template, choice: dict[str, str],
            mask: tuple[str, ...] | list[str] = (), mask_token: str = "[MASK]") -> list[Filled]:
    """The sentences of one choice of entries, one per combination of synonyms.

    Parameters
    ----------
    book : the template file.
    template : a template of ``book`` or its name.
    choice : slot → entry id for every slot (masked slots too: agreement rules may refer
        to them, e.g. a Greek adjective agreeing with a masked group).
    mask : slots replaced by ``mask_token`` instead of a word.
    mask_token : the model's mask token.

    Returns
    -------
    list of :class:`Filled`, synonym combinations in order (``variant`` 0, 1, …).

    >>> raw = {"lists": {"g": [{"id": "w", "features": {"gender": "f"}, "forms": {"n": "women"}}],
    ...                  "a": [{"id": "rude", "forms": {"f": ["rude", "impolite"]}}]},
    ...        "templates": [{"name": "t", "text": "{g} are {a}.",
    ...                       "slots": {"g": {"list": "g", "form": "n", "role": "target"},
    ...                                 "a": {"list": "a", "form": "{g.gender}"}}}]}
    >>> [f.text for f in realise(parse_templates(raw), "t", {"g": "w", "a": "rude"}, mask=["g"])]
    ['[MASK] are rude.', '[MASK] are impolite.']
    """
    t = book.template(template) if isinstance(template, str) else template
    missing = [s for s in t.slots if s not in choice]
    if missing:
        raise TemplateError(f"template {t.name!r}: placeholder(s) {missing} left unfilled")
    extra = [s for s in choice if s not in t.slots]
    if extra:
        raise TemplateError(f"template {t.name!r} has no slot(s) {extra}")
    bad_mask = [s for s in mask if s not in t.slots]
    if bad_mask:
        raise TemplateError(f"template {t.name!r}: cannot mask unknown slot(s) {bad_mask}")
    entries = {s: book.lists[t.slots[s].list].entry(choice[s]) for s in t.slots}
    options: dict[str, tuple[str, ...]] = {}
    for s in _order(t):
        slot = t.slots[s]
        if s in mask:
            options[s] = (mask_token,)
            continue
        form = _form_name(t, slot, entries)
        if form not in entries[s].forms:
            raise TemplateError(f"template {t.name!r}: entry {entries[s].id!r} of list {slot.list!r} "
                                f"has no form {form!r} (slot {s!r})")
        options[s] = entries[s].forms[form]
    names = list(options)
    out = []
    for v, words in enumerate(itertools.product(*(options[n] for n in names))):
        fill = dict(zip(names, words, strict=True))
        text, spans = _substitute(t, fill)
        out.append(Filled(template=t.name, text=text, choice=dict(choice), words=fill, spans=spans,
                          masked=tuple(mask), variant=v))
    return out


def _substitute(t: Template, fill: dict[str, str]) -> tuple[str, dict[str, tuple[int, int]]]:
    pieces, spans, pos, at = [], {}, 0, 0
    for m in _PLACEHOLDER.finditer(t.text):
        pieces.append(t.text[pos:m.start()])
        at += m.start() - pos
        if m.group(1) is None:  # escaped brace
            pieces.append(m.group(0)[0])
            at += 1
        else:
            word = fill.get(m.group(1))
            if word is None:
                raise TemplateError(f"template {t.name!r}: placeholder {{{m.group(1)}}} left unfilled")
            pieces.append(word)
            spans[m.group(1)] = (at, at + len(word))
            at += len(word)
        pos = m.end()
    pieces.append(t.text[pos:])
    return "".join(pieces), spans


def expand(book: TemplateBook, template: str | Template, mask: tuple[str, ...] | list[str] = (),
           mask_token: str = "[MASK]", fixed: dict[str, str] | None = None) -> list[Filled]:
    """Every sentence of a template: all entries of every slot (``fixed`` pins some),
    all synonym variants, slots in ``mask`` masked. Order: slots in template order, entries
    in list order, then variants."""
    t = book.template(template) if isinstance(template, str) else template
    fixed = fixed or {}
    names = list(t.slots)
    pools = [[fixed[n]] if n in fixed else book.lists[t.slots[n].list].ids for n in names]
    out = []
    for ids in itertools.product(*pools):
        out.extend(realise(book, t, dict(zip(names, ids, strict=True)), mask, mask_token))
    return out


def mask_slots(filled: Filled, slots: tuple[str, ...] | list[str], mask_token: str = "[MASK]") -> Filled:
    """``filled`` with the words of ``slots`` replaced by ``mask_token`` (spans recomputed).

    Masking a realised sentence (rather than realising it masked) keeps the synonym
    variant and the agreeing words of the other slots exactly as they were.

    >>> f = Filled("t", "men are rude.", {"g": "men", "a": "rude"}, {"g": "men", "a": "rude"},
    ...            {"g": (0, 3), "a": (8, 12)})
    >>> mask_slots(f, ["a"]).text, mask_slots(f, ["g", "a"]).spans
    ('men are [MASK].', {'g': (0, 6), 'a': (11, 17)})
    """
    unknown = [s for s in slots if s not in filled.spans]
    if unknown:
        raise TemplateError(f"template {filled.template!r} has no slot(s) {unknown} to mask")
    words = dict(filled.words)
    for s in slots:
        words[s] = mask_token
    order = sorted(filled.spans, key=lambda s: filled.spans[s][0])
    text, spans, pos, at = [], {}, 0, 0
    for s in order:
        a, b = filled.spans[s]
        text.append(filled.text[pos:a])
        at += a - pos
        text.append(words[s])
        spans[s] = (at, at + len(words[s]))
        at += len(words[s])
        pos = b
    text.append(filled.text[pos:])
    return Filled(template=filled.template, text="".join(text), choice=dict(filled.choice), words=words,
                  spans=spans, masked=tuple(dict.fromkeys((*filled.masked, *slots))), variant=filled.variant)
