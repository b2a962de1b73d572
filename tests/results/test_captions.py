"""Every caption of the paper is true to its table: a caption that names a model, a language
or published values names what its table holds (checked on the committed main text and
supplement sections, against the table files they print)."""

import re
from pathlib import Path

import pytest
from polybias import paths

ROOT = paths.project_root()
DIRECTIVE = re.compile(r"^<!--\s*(table|figure):\s*(.*?)\s*-->\s*$", re.M)
#: How a caption names a model, and what its table (file name or content) must then hold
MODEL_WORDS = {"SmolLM2": "smollm2", "Gemma": "gemma", "MiniLM": "minilm", "word2vec": ("w2v", "word2vec")}
#: Language names a caption may use, and their codes in a table's language column
LANGUAGES = {"English": "en", "Bangla": "bn", "Hindi": "hi", "Czech": "cs", "Greek": "el",
             "Latvian": "lv", "German": "de", "French": "fr", "Dutch": "nl", "Japanese": "ja",
             "Russian": "ru", "Spanish": "es", "Turkish": "tr"}


def captions() -> list[tuple[str, str, str, str]]:
    """(document file, table file, caption, table text) of every table directive."""
    out = []
    for folder in ("main", "sections"):
        for section in sorted((ROOT / "paper" / folder).glob("*.md")):
            for kind, spec in DIRECTIVE.findall(section.read_text(encoding="utf-8")):
                if kind != "table":
                    continue
                name, _, caption = (p.strip() for p in spec.partition("|"))
                caption = re.sub(r"\s*\{#[^}]+\}\s*$", "", caption)
                file = re.match(r"[^#\[(]+", name)[0]
                text = (ROOT / "paper" / "tables" / file).read_text(encoding="utf-8")
                out.append((f"{folder}/{section.name}", file, caption, text))
    return out


CAPTIONS = captions()


def test_there_are_captions_to_check():
    assert len(CAPTIONS) > 60 and any(d.startswith("main/") for d, *_ in CAPTIONS)


def caption_problems(document: str, file: str, caption: str, text: str) -> list[str]:
    """What a caption says that its table does not hold: a model, a language, published values."""
    problems = []
    holds = (file + "\n" + text).lower()
    for word, needles in MODEL_WORDS.items():
        if re.search(rf"\b{word}", caption):
            needles = (needles,) if isinstance(needles, str) else needles
            if not any(n in holds for n in needles):
                problems.append(f"{document}: caption names {word}, {file} holds none")
    header = next((line for line in text.splitlines() if line.startswith("|")), "")
    if re.search(r"\|\s*language\s*\|", header):
        codes = set(re.findall(r"\|\s*([a-z]{2})\s*\|", text))
        problems += [f"{document}: caption names {name}, {file}'s language column has no {code}"
                     for name, code in LANGUAGES.items()
                     if re.search(rf"\b{name}\b", caption) and code not in codes]
    if (caption.startswith("Published") or "published values" in caption.lower()) \
            and not ("reported" in holds or "published" in holds or "reported" in caption):
        problems.append(f"{document}: caption says published values, {file} names no published column")
    return problems


@pytest.mark.parametrize("document, file, caption, text", CAPTIONS, ids=[f"{d}:{f}" for d, f, *_ in CAPTIONS])
def test_a_caption_names_only_models_and_languages_its_table_holds(document, file, caption, text):
    assert caption_problems(document, file, caption, text) == []


def test_the_check_finds_a_caption_that_names_what_its_table_lacks():
    table = "| model | language | score |\n|---|---|---|\n| bert | en | 55 |\n"
    assert caption_problems("s.md", "crows_bert.md", "BERT in English", table) == []
    assert caption_problems("s.md", "crows_bert.md", "SmolLM2 in German", table) == [
        "s.md: caption names SmolLM2, crows_bert.md holds none",
        "s.md: caption names German, crows_bert.md's language column has no de"]
    assert caption_problems("s.md", "x.md", "Published values of seed 002", table) == [
        "s.md: caption says published values, x.md names no published column"]


def test_a_caption_that_says_planted_names_a_table_of_planted_models():
    """A caption that says the models were planted names a table of planted models (the
    validity and agreement tables hold planted models under the names of their designs)."""
    wrong = [f"{d}: {f}" for d, f, caption, text in CAPTIONS
             if re.search(r"\bplanted\b", caption, re.I) and "planted" not in (f + text).lower()
             and "validity" not in f and "agreement" not in f]
    assert not wrong, wrong


def test_every_table_a_run_wrote_is_sourced_with_what_that_run_declares():
    """What a table holds (its model, dataset, languages, sample) is not typed in a caption
    but generated from the run that wrote it: in the committed supplement, every table whose
    file a run names (``manuscript.table_runs``) is followed by a *Source* line naming that
    run and its declaration (in the main text too), and a caption naming another run's model
    is caught above."""
    from polybias.results import manuscript

    runs = manuscript.table_runs()
    built = "".join((ROOT / "paper" / f).read_text(encoding="utf-8") for f in ("manuscript.md", "supplement.md"))
    printed = {file for _, file, _, _ in CAPTIONS if file in runs}
    assert len(printed) > 40
    for file in sorted(printed):
        run = runs[file]
        declared = manuscript.run_declaration(run)
        where = Path(run["executed"]).stem if run.get("executed") else Path(run["kept"]).name
        assert f"{where}" in built and f"with {declared}" in built, file
