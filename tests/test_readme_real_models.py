"""The README's statement of the real-model runs' CPU time is the sum over the records kept
under paper/records (their run.json), so it cannot drift from what is committed."""

from pathlib import Path

from polybias.runner.execution import kept_summary, kept_summary_line

REPO = Path(__file__).resolve().parents[1]


def test_the_readme_states_the_kept_runs_and_their_cpu_time():
    line = kept_summary_line(kept_summary(REPO))
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert line in readme, f"README.md should state, after '<!-- kept: ... -->':\n{line}"
    assert kept_summary(REPO)["runs"] > 0
