"""The README's offline paragraph: the runs it says are skipped with neither network nor
mirror are those of ``configs/sweeps/default.yaml`` that declare a data source which the
environment's set-up does not put in place (``data/embedded.txt``)."""

import re
from pathlib import Path

from polybias import paths
from polybias.data import sources
from polybias.runner.sweep import load_sweep

BEGIN, END = "<!-- offline runs: begin -->", "<!-- offline runs: end -->"


def skipped_offline() -> list[str]:
    """The executed notebooks (names without .ipynb) of the default sweep's runs that need
    a source beyond the embedded ones."""
    embedded = set(sources.embedded_sources())
    runs = load_sweep(paths.configs_dir() / "sweeps" / "default.yaml")
    return sorted(Path(r.executed).stem for r in runs if r.executed and set(r.sources) - embedded)


def test_the_readme_lists_the_runs_skipped_offline():
    readme = (paths.project_root() / "README.md").read_text(encoding="utf-8")
    assert BEGIN in readme and END in readme, "README.md lacks the offline runs markers"
    block = readme.split(BEGIN, 1)[1].split(END, 1)[0]
    listed = re.findall(r"`([^`]+)`", block)
    assert listed == skipped_offline(), (
        "README.md's offline runs differ from the default sweep's sources: write "
        + ", ".join(f"`{n}`" for n in skipped_offline()) + ".")


def test_the_embedded_defaults_need_no_run_to_be_skipped():
    """The runs on w2v-gnews alone (WEAT, debiasing) are not among them."""
    assert "01_weat_w2v-gnews" not in skipped_offline()
    assert "09_debiasing_w2v-gnews" not in skipped_offline()
