"""The README's offline paragraph: the runs it says are skipped with neither network nor
mirror are those of ``configs/sweeps/default.yaml`` that declare a data source (under
``sources:``) which the environment's set-up does not put in place (``data/embedded.txt``),
and the runs it says run in part are the others whose ``optional_sources:`` (read by their
reproduction part only) are not all put in place."""

import re
from pathlib import Path

from polybias import paths
from polybias.data import sources
from polybias.runner.sweep import load_sweep
from polybias.studies import categorical_bias, crows_pairs, cultural_interactions

BEGIN, END = "<!-- offline runs: begin -->", "<!-- offline runs: end -->"
PART_BEGIN, PART_END = "<!-- offline runs in part: begin -->", "<!-- offline runs in part: end -->"


def _runs():
    return load_sweep(paths.configs_dir() / "sweeps" / "default.yaml")


def skipped_offline() -> list[str]:
    """The executed notebooks (names without .ipynb) of the default sweep's runs that need
    a source beyond the embedded ones."""
    embedded = set(sources.embedded_sources())
    return sorted(Path(r.executed).stem for r in _runs() if r.executed and set(r.sources) - embedded)


def partly_offline() -> list[str]:
    """The executed notebooks of the default sweep's runs that run in part offline: every
    source they need is embedded, some that their reproduction part reads is not."""
    embedded = set(sources.embedded_sources())
    return sorted(Path(r.executed).stem for r in _runs() if r.executed
                  and not set(r.sources) - embedded and set(r.optional_sources) - embedded)


def _listed(readme: str, begin: str, end: str) -> list[str]:
    assert begin in readme and end in readme, f"README.md lacks the markers {begin} ... {end}"
    return re.findall(r"`([^`]+)`", readme.split(begin, 1)[1].split(end, 1)[0])


def test_the_readme_lists_the_runs_skipped_offline():
    readme = (paths.project_root() / "README.md").read_text(encoding="utf-8")
    assert _listed(readme, BEGIN, END) == skipped_offline(), (
        "README.md's offline runs differ from the default sweep's sources: write "
        + ", ".join(f"`{n}`" for n in skipped_offline()) + ".")


def test_the_readme_lists_the_runs_that_run_in_part_offline():
    readme = (paths.project_root() / "README.md").read_text(encoding="utf-8")
    assert _listed(readme, PART_BEGIN, PART_END) == partly_offline(), (
        "README.md's offline runs in part differ from the default sweep's optional_sources: "
        "write " + ", ".join(f"`{n}`" for n in partly_offline()) + ".")


def test_the_embedded_defaults_need_no_run_to_be_skipped():
    """The runs on w2v-gnews alone (WEAT, debiasing) are not among them."""
    assert "01_weat_w2v-gnews" not in skipped_offline()
    assert "09_debiasing_w2v-gnews" not in skipped_offline()


def test_the_planted_runs_of_05_06_07_skip_only_their_reproduction_part():
    """Their model part needs no download: the sweep declares the reproduction's files as
    optional, exactly those the notebooks' reproduction parts check."""
    part = set(partly_offline())
    assert {"05_crows_pairs_planted-mlm", "06_categorical_bias_planted-mlm",
            "07_cultural_interactions_planted-mlm"} <= part
    assert not part & set(skipped_offline())
    declared = {r.key: r.optional_sources for r in _runs() if r.optional_sources}
    assert declared == {
        "05_crows_pairs__model-planted-mlm": crows_pairs.REPRODUCTION_SOURCES,
        "06_categorical_bias__model-planted-mlm": categorical_bias.REPRODUCTION_SOURCES,
        "07_cultural_interactions__model-planted-mlm": cultural_interactions.REPRODUCTION_SOURCES}
