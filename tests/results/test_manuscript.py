"""The manuscript is assembled from section files; every number comes from a generated file."""

import json
import re
import shutil
from pathlib import Path

import pytest
from polybias import paths
from polybias.results import manuscript
from polybias.results.manuscript import ManuscriptError
from polybias.runner.runs import read_sweep


def test_table_figure_and_reported_directives_are_replaced(tmp_path):
    sections = tmp_path / "sections"
    sections.mkdir()
    (sections / "02_b.md").write_text("## B\n<!-- reported: caliskan2017_weat | test=WEAT3 -->\n")
    (sections / "01_a.md").write_text(
        "# A\n<!-- table: weat_w2v-gnews.md -->\n<!-- figure: weat_w2v-gnews.png | WEAT bars -->\n")
    out = manuscript.build_manuscript(sections, tmp_path / "m.md")
    text = out.read_text()
    table = (paths.paper_dir() / "tables" / "weat_w2v-gnews.md").read_text().strip()
    fitted, _, fits = manuscript.fit_table(table)
    assert fits and fitted in text
    # numbered, captioned, linked to its full-size file
    assert "[![WEAT bars](../figures/weat_w2v-gnews.png)](../figures/weat_w2v-gnews.png)" in text
    assert "**Figure 1.** WEAT bars" in text
    assert "**Table 1.** `weat_w2v-gnews`" in text and "**Table 2.** Published values" in text
    assert text.index("# A") < text.index("## B")  # sections in name order
    assert "| WEAT3 | 0.5800 |" in text and "WEAT1" not in text.split("## B")[1]
    assert "<!-- table" not in text and "<!-- reported" not in text


def test_the_title_block_names_the_project_version_and_stamp(tmp_path):
    sections = tmp_path / "sections"
    sections.mkdir()
    (sections / "00_a.md").write_text("# A title\n\n**Abstract.** Short.\n")
    text = manuscript.build_manuscript(sections, tmp_path / "m.md", stamp="commit abc1234, 2026-01-02").read_text()
    lines = [line for line in text.splitlines() if line and not line.startswith("<!--")]
    assert lines[0] == "# A title"
    assert lines[1].startswith(f"*{manuscript.AUTHOR}* · version ") and lines[1].endswith("commit abc1234, 2026-01-02")
    assert lines[2] == "**Abstract.** Short."


def test_a_long_table_goes_to_appendix_b_and_a_constant_column_to_a_note(tmp_path, monkeypatch):
    root = tmp_path / "project"
    tables = root / "paper" / "tables"
    tables.mkdir(parents=True)
    rows = "\n".join(f"| t{i} | {i} | same note |" for i in range(25))
    (tables / "long.md").write_text(f"| test | d | note |\n|---|---|---|\n{rows}\n\n"
                                    "**Details**\n\n| a |\n|---|\n| 1 |\n")
    (tables / "short.md").write_text("| test | d |\n|---|---|\n| x | 1 |\n")
    sections = root / "paper" / "sections"
    sections.mkdir(parents=True)
    (sections / "01_s.md").write_text("## 1. S\nLong ones are in @app:long.\n"
                                      "<!-- table: long.md | A long table -->\n"
                                      "<!-- table: short.md | A short table -->\n")
    (sections / "90_a.md").write_text("## Appendix A. Published tables\n")
    monkeypatch.setenv("POLYBIAS_ROOT", str(root))
    text = manuscript.build_manuscript(sections, tmp_path / "m.md").read_text()
    # the long tables take the letter after the sections' own appendices
    main, appendix = text.split(f"## Appendix B. {manuscript.LONG_TABLES}")
    assert "Long ones are in Appendix B." in main
    assert "**Table 1.** A long table. *25 rows × 2 columns: printed in [Appendix B]" in main
    assert "*Table 2 — more of A long table — is printed in [Appendix B]" in main
    assert "**Table 3.** A short table" in main and "| x | 1 |" in main
    assert "| t0 |" not in main and "| t24 | 24 |" in appendix
    assert appendix.count("same note") == 1 and "*Note:* note: same note" in appendix
    assert "**Table 2.** A long table (continued): Details" in appendix


@pytest.mark.parametrize("directive, message", [
    ("<!-- table: missing.md -->", "paper/tables/missing.md"),
    ("<!-- figure: missing.png -->", "figures/missing.png"),
    ("<!-- reported: no_such_study -->", "paper/reported/no_such_study.csv"),
    ("<!-- reported: caliskan2017_weat | test -->", "not key=value"),
    ("<!-- reported: caliskan2017_weat | test=WEAT99 -->", "no rows"),
])
def test_missing_files_are_errors_naming_the_section_and_nothing_is_written(tmp_path, directive, message):
    sections = tmp_path / "sections"
    sections.mkdir()
    (sections / "01_x.md").write_text(f"text\n{directive}\n")
    with pytest.raises(ManuscriptError, match="sections/01_x.md") as err:
        manuscript.build_manuscript(sections, tmp_path / "m.md")
    assert message in str(err.value)
    assert not (tmp_path / "m.md").exists()


def test_records_directive_renders_the_exported_cross_model_table(tmp_path, monkeypatch):
    root = tmp_path / "project"
    export = root / "paper" / "export"
    export.mkdir(parents=True)
    (export / "kurita.csv").write_text("study,test,subset,m1 (bn),m2 (bn)\n"
                                       "logprob,t,structure S1,1.93 (p=0.001),-0.55 (p=0.853)\n"
                                       "logprob,t,structure S2,1.90 (p=0.002),\n")
    (export / "kurita.png").write_bytes(b"png")
    monkeypatch.setenv("POLYBIAS_ROOT", str(root))
    whole = manuscript.render_section("<!-- records: kurita -->\n", where="s.md")
    assert whole.splitlines()[2:6] == ["| study | test | subset | m1 (bn) | m2 (bn) |", "|---|---|---|---|---|",
                                      "| logprob | t | structure S1 | 1.93 (p=0.001) | -0.55 (p=0.853) |",
                                      "| logprob | t | structure S2 | 1.90 (p=0.002) |  |"]
    assert "](export/kurita.png)" in whole and "[kurita.csv](export/kurita.csv)" in whole
    part = manuscript.render_section("<!-- records: kurita | subset=structure S2 -->\n", where="s.md")
    assert "S1" not in part and "S2" in part and ".png" not in part  # filtered: no figure
    for directive, message in (("kurita | model=m1", "no column 'model'"),
                               ("kurita | subset=structure S9", "no rows"),
                               ("kurita | subset", "not key=value"),
                               ("cb", "no records table paper/export/cb.csv")):
        with pytest.raises(ManuscriptError, match="s.md") as err:
            manuscript.render_section(f"<!-- records: {directive} -->\n", where="s.md")
        assert message in str(err.value)


def test_no_sections_is_an_error(tmp_path):
    with pytest.raises(ManuscriptError, match="no section files"):
        manuscript.build_manuscript(tmp_path, tmp_path / "m.md")


def test_committed_manuscript_is_built_from_the_current_sections(tmp_path):
    committed = [paths.paper_dir() / "manuscript.md", paths.paper_dir() / "supplement.md"]
    if not all(f.is_file() for f in committed):
        pytest.skip("paper/manuscript.md or paper/supplement.md not built yet (make paper)")
    fresh = manuscript.build_paper(tmp_path)
    for new, old in zip(fresh, committed, strict=True):
        assert new.read_text() == old.read_text(), f"paper/{old.name} is stale: run make paper"


def _project(tmp_path, monkeypatch, sections: dict[str, str]):
    """A project with two small tables, a figure in two parts and a records table, and
    ``sections`` (name -> text); returns the sections folder."""
    root = tmp_path / "project"
    (root / "paper" / "tables").mkdir(parents=True)
    (root / "paper" / "export").mkdir(parents=True)
    (root / "figures").mkdir()
    for name in ("a.md", "b.md"):
        (root / "paper" / "tables" / name).write_text("| test | d |\n|---|---|\n| x | 1 |\n")
    for name in ("f.png", "f_2.png", "g.png"):
        (root / "figures" / name).write_bytes(b"png")
    (root / "paper" / "export" / "kurita.csv").write_text("study,test,m1\nlogprob,t,1.9\n")
    (root / "paper" / "export" / "kurita.png").write_bytes(b"png")
    (root / "paper" / "export" / "kurita_2.png").write_bytes(b"png")
    folder = root / "paper" / "sections"
    folder.mkdir()
    for name, text in sections.items():
        (folder / name).write_text(text)
    monkeypatch.setenv("POLYBIAS_ROOT", str(root))
    return folder


def test_labels_resolve_to_numbers_anywhere_in_the_text(tmp_path, monkeypatch):
    sections = _project(tmp_path, monkeypatch, {
        "01_s.md": "## 1. S\n\n@tab:b follows @tab:a; @fig:f has two parts, @fig:g one.\n\n"
                   "<!-- table: a.md | First {#tab:a} -->\n\n<!-- figure: f.png | Parts {#fig:f} -->\n",
        "02_t.md": "## 2. T\n\nAs @tab:kurita and @fig:kurita show (and @tab:a above).\n\n"
                   "<!-- table: b.md | Second {#tab:b} -->\n\n<!-- records: kurita {#tab:kurita} -->\n\n"
                   "<!-- figure: g.png | One {#fig:g} -->\n",
    })
    text = manuscript.build_manuscript(sections, tmp_path / "m.md").read_text()
    assert "Table 2 follows Table 1; Figures 1–2 has two parts, Figure 5 one." in text
    assert "As Table 3 and Figures 3–4 show (and Table 1 above)." in text
    assert "**Figure 1.** Parts (part 1 of 2)" in text and "**Figure 2.** Parts (part 2 of 2)" in text
    assert "{#" not in text and "@tab" not in text and "@fig" not in text
    assert manuscript.unreferenced(sections) == []


@pytest.mark.parametrize("text, message", [
    ("See @tab:nowhere.\n<!-- table: a.md | A {#tab:a} -->\n", "@tab:nowhere refers to no table or figure"),
    ("@tab:a\n<!-- table: a.md | A {#tab:a} -->\n<!-- table: b.md | B {#tab:a} -->\n", "'tab:a' is defined twice"),
    ("@fig:a\n<!-- table: a.md | A {#fig:a} -->\n", "must start with 'tab'"),
    ("@tab:g\n<!-- figure: g.png | G {#tab:g} -->\n", "must start with 'fig'"),
])
def test_a_reference_to_no_label_or_a_label_defined_twice_is_an_error(tmp_path, monkeypatch, text, message):
    sections = _project(tmp_path, monkeypatch, {"01_s.md": text})
    with pytest.raises(ManuscriptError, match="sections/01_s.md") as err:
        manuscript.build_manuscript(sections, tmp_path / "m.md")
    assert message in str(err.value)
    assert not (tmp_path / "m.md").exists()


def test_unreferenced_lists_main_text_items_no_reference_names(tmp_path, monkeypatch):
    sections = _project(tmp_path, monkeypatch, {
        "01_s.md": "@tab:a only.\n<!-- table: a.md | A {#tab:a} -->\n<!-- table: b.md | B {#tab:b} -->\n"
                   "<!-- figure: g.png | G -->\n",
        "90_appendix.md": "## Appendix A\n<!-- table: b.md | In the appendix -->\n",  # needs none
    })
    assert manuscript.unreferenced(sections) == ["Table 2", "Figure 1"]


def test_every_table_and_figure_of_the_main_text_is_referenced():
    """The committed sections: every numbered table and figure before the appendices is
    named by a reference in the text (``@tab:``/``@fig:``), and every reference resolves."""
    assert manuscript.unreferenced() == []


def test_the_sections_are_numbered_once_each_in_order():
    for folder in ("sections", "main"):
        numbers = [int(n) for f in sorted((paths.paper_dir() / folder).glob("*.md"))
                   for n in re.findall(r"(?m)^## (\d+)\. ", f.read_text(encoding="utf-8"))]
        assert numbers == sorted(set(numbers)), (folder, numbers)


def test_a_citation_inside_parentheses_or_possessive_does_not_double_its_parentheses(tmp_path):
    sections = tmp_path / "sections"
    sections.mkdir()
    (sections / "01_a.md").write_text(
        "# A\n\nCEAT in Bangla (seed 000: {cite:t}`sadhu2024`); CEAT {cite:p}`guo2021`,\n"
        "as {cite:t}`may2019` do (also {cite:p}`a2020,b2021` and `f(x` (code) then\n"
        "{cite:t}`kurita2019`'s score).\n\n{cite:t}`kurita2019`'s score, {cite:t}`c2022`.\n\n"
        "| m (x | d |\n|---|---|\n| {cite:t}`d2023` | 1 |\n")
    text = manuscript.build_manuscript(sections, tmp_path / "m.md").read_text()
    author_year = "{{cite:author}}`{0}`, {{cite:year}}`{0}`".format
    assert f"(seed 000: {author_year('sadhu2024')});" in text
    assert "CEAT {cite:p}`guo2021`," in text and "as {cite:t}`may2019` do" in text
    assert f"(also {author_year('a2020')}; {author_year('b2021')} and `f(x` (code) then" in text
    assert "{cite:author}`kurita2019`'s [{cite:year}`kurita2019`] score)." in text  # nested
    assert "{cite:author}`kurita2019`'s ({cite:year}`kurita2019`) score, {cite:t}`c2022`." in text
    assert "| {cite:t}`d2023` | 1 |" in text  # a table row's parentheses are its own
    assert not re.search(r"\([^()]*\{cite:[pt]\}", text.split("| m (x")[0])


#: Placeholder text that must not reach the manuscript: a run scoring a model in place of the
#: published one, a comparison with one language, a real-model row that was not run.
PLACEHOLDERS = ("instead)", "nothing to compare", "not run: polybias sweep")


def test_no_placeholder_of_a_run_reaches_the_manuscript():
    for name in ("manuscript.md", "supplement.md"):
        text = (paths.paper_dir() / name).read_text(encoding="utf-8")
        found = {p: text.count(p) for p in PLACEHOLDERS if p in text}
        assert not found, (name, found)


def _paper(tmp_path, monkeypatch, main: dict[str, str], supplement: dict[str, str]):
    """A project (:func:`_project`) whose supplement is ``supplement`` and main text ``main``."""
    sections = _project(tmp_path, monkeypatch, supplement)
    folder = sections.parent / "main"
    folder.mkdir()
    for name, text in main.items():
        (folder / name).write_text(text)
    (sections.parent / "tables" / "wide.md").write_text(
        "| a | b | c |\n|---|---|---|\n" + "".join(f"| {k} | x{k % 2} | {'y' * 60} |\n" for k in range(25))
        + "\nMore:\n\n| m | n |\n|---|---|\n| 1 | 2 |\n")
    return sections.parent


def test_the_main_text_cites_the_supplement_by_its_s_numbers_and_indexes_them(tmp_path, monkeypatch):
    _paper(tmp_path, monkeypatch, {
        "a_intro.md": "# Title\n\n## 1. Findings\n\nAs @tab:m shows, and the supplement's @tab:b and @fig:g.\n\n"
                      "<!-- table: a.md | A finding {#tab:m} -->\n"},
        {"00_intro.md": "# Supplement\n\n## 1. S\n\n@tab:a and @tab:b, @fig:g.\n\n<!-- table: a.md | First {#tab:a} -->\n\n"
                        "<!-- table: b.md | Second {#tab:b} -->\n\n<!-- figure: g.png | One {#fig:g} -->\n"})
    main, supplement = manuscript.build_paper(tmp_path / "out")
    main_text, supplement_text = main.read_text(), supplement.read_text()
    assert "**Table S1.** First" in supplement_text and "**Figure S1.** One" in supplement_text
    assert "As Table 1 shows, and the supplement's Table S2 and Figure S1." in main_text
    index = main_text.split("## Index to the supplement")[1]
    assert "**1. Findings**" in index and "- Table S2 (section 1): Second" in index
    assert "- Figure S1 (section 1): One" in index


def test_a_main_text_table_too_long_for_the_page_is_an_error_and_one_of_its_tables_is_not(tmp_path, monkeypatch):
    supplement = {"00_intro.md": "# S\n\n@tab:a\n\n<!-- table: a.md | First {#tab:a} -->\n"}
    paper = _paper(tmp_path, monkeypatch, {"a_m.md": "# M\n\n@tab:w\n\n<!-- table: wide.md | Wide {#tab:w} -->\n"},
                   supplement)
    with pytest.raises(ManuscriptError, match=r"main/a_m.md: table 1 \(Wide\) has 25 rows × 2 columns"):
        manuscript.build_paper(tmp_path / "out")
    assert not (tmp_path / "out").exists()
    (paper / "main" / "a_m.md").write_text(
        "# M\n\n@tab:w @tab:v\n\n<!-- table: wide.md#2 | The second {#tab:w} -->\n\n"
        "<!-- table: wide.md#1[b, a](b=x1) | Odd rows, two columns {#tab:v} -->\n")
    text = manuscript.build_paper(tmp_path / "out")[0].read_text()
    assert "| m | n |\n|---|---|\n| 1 | 2 |" in text
    odd = text.split("**Table 2.** Odd rows, two columns")[1]
    # the rows with b = x1, columns b and a; b, now the same in every row, becomes a note
    assert "| a |\n|---|\n| 1 |\n| 3 |" in odd and "*Note:* b: x1" in odd
    assert "| 0 |" not in odd and "| 2 |" not in odd and "yyy" not in odd


@pytest.mark.parametrize("spec, message", [
    ("wide.md#3", "holds tables 1 to 2"), ("wide.md#1[z]", "has no column 'z'"),
    ("wide.md#1[a](b=none)", "no row has b=none"), ("wide.md#1[a](b)", "is not column=value"),
])
def test_a_table_pick_that_names_nothing_is_an_error(tmp_path, monkeypatch, spec, message):
    _paper(tmp_path, monkeypatch, {"a_m.md": f"# M\n\n@tab:w\n\n<!-- table: {spec} | W {{#tab:w}} -->\n"},
           {"00_intro.md": "# S\n"})
    with pytest.raises(ManuscriptError, match="main/a_m.md") as err:
        manuscript.build_paper(tmp_path / "out")
    assert message in str(err.value)


def test_the_committed_main_text_is_findings_first_and_short():
    """The main text: research questions answered section by section, at most 12 tables
    and 10 figures, each referenced, and an index to the supplement; the supplement holds
    the rest, numbered S1.."""
    text = (paths.paper_dir() / "manuscript.md").read_text(encoding="utf-8")
    body = text.split("## Index to the supplement")[0]
    tables = re.findall(r"(?m)^\*\*Table (\d+)\.\*\*", body)
    figures = re.findall(r"(?m)^\*\*Figure (\d+)\.\*\*", body)
    assert 0 < len(tables) <= 12 and 0 < len(figures) <= 10, (len(tables), len(figures))
    assert "Long tables" not in text and "(continued)" not in text
    assert re.search(r"\*\*Abstract\.\*\*.*\d+ of 29 European languages", text, re.S)
    questions = re.findall(r"(?ms)^\d\. \*\*(.+?)\*\*", text)
    assert len(questions) == 4 and all(q.endswith("?") for q in questions)
    assert len(re.findall(r"(?m)^- (?:Table|Figure)s? S\d+", text)) >= 10
    supplement = (paths.paper_dir() / "supplement.md").read_text(encoding="utf-8")
    assert re.search(r"(?m)^\*\*Table S1\.\*\*", supplement)


def _make_lines(makefile: str, target: str) -> str:
    """``target``'s rule line and recipe in a Makefile's text, as one string."""
    lines = makefile.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"{target}:"))
    end = next((i for i in range(start + 1, len(lines)) if not lines[i].startswith("\t")), len(lines))
    return "\n".join(lines[start:end])


def test_a_missing_table_figure_or_export_advises_make_reproduce_which_writes_it(tmp_path, monkeypatch):
    """In a checkout where nothing was run, a table, figure or records directive is an error
    ending ``(run make reproduce)``; that target runs the default sweep, whose runs write the
    paper's tables (table_file) and, as runs with a copy beside the paper, its figures, and
    exports its records to paper/export."""
    project = paths.project_root()
    default = project / "configs/sweeps/default.yaml"
    runs = read_sweep(default)
    table = next(r.parameters["table_file"] for r in runs if r.parameters.get("table_file"))
    assert table.startswith("paper/tables/")
    empty = tmp_path / "checkout"
    (empty / "paper").mkdir(parents=True)
    monkeypatch.setenv("POLYBIAS_ROOT", str(empty))
    for directive, named in ((f"table: {Path(table).name}", table),
                             ("figure: weat_w2v-gnews.png", "figures/weat_w2v-gnews.png"),
                             ("records: weat", "paper/export/weat.csv")):
        with pytest.raises(ManuscriptError, match="s.md") as err:
            manuscript.render_section(f"<!-- {directive} -->\n", where="s.md")
        assert named in str(err.value) and str(err.value).endswith("(run make reproduce)")
    makefile = (project / "Makefile").read_text(encoding="utf-8")
    reproduce = _make_lines(makefile, "reproduce")
    assert "polybias sweep configs/sweeps/default.yaml" in reproduce and "$(EXPORT)" in reproduce
    assert "polybias.results.manuscript" in reproduce
    export = next(line for line in makefile.splitlines() if line.startswith("EXPORT "))
    assert "export --sweep configs/sweeps/default.yaml --out paper/export" in export
    assert any(r.executed for r in runs)  # runs beside the paper draw into figures/


def test_a_tables_source_names_the_run_that_wrote_it_and_what_it_declares(tmp_path, monkeypatch):
    """The *Source* note of a table is generated from the run that wrote it: the executed
    notebook whose injected ``table_file`` names it, or the kept run whose ``run.json`` does,
    with the model, dataset, languages and sample the run set (stated, or its notebook's
    defaults), so that what a caption says a table holds cannot drift from it."""
    root = tmp_path / "project"
    shutil.copytree(paths.project_root() / "notebooks", root / "notebooks")
    (root / "pyproject.toml").write_text("")
    paper = root / "paper"
    (paper / "executed").mkdir(parents=True)
    injected = ('# Parameters\nmodel = "smollm2-135m-instruct-q4_1"\nmax_items = 80\n'
                'table_file = "paper/tables/gest_smollm2_80.md"\n')
    notebook = {"cells": [{"cell_type": "code", "metadata": {"tags": ["injected-parameters"]},
                           "source": injected.splitlines(keepends=True), "outputs": []}]}
    (paper / "executed" / "15_gest_smollm2_80.ipynb").write_text(json.dumps(notebook))
    kept = paper / "records" / "crows-languages" / "12_crows_languages__model-g__dataset-indibias"
    kept.mkdir(parents=True)
    (kept / "run.json").write_text(json.dumps({
        "status": "kept", "notebook": "notebooks/12_crows_languages.py",
        "parameters": {"model": "gemma-3-270m-q4_k_m", "dataset": "indibias", "method": "causal",
                       "table_file": "paper/tables/crows-languages_g_indibias.md"}}))
    monkeypatch.setenv("POLYBIAS_ROOT", str(root))
    note = manuscript.source_note("gest_smollm2_80.md", "15_gest.md")
    assert note == ("*Source:* notebook [15_gest_smollm2_80](executed/15_gest_smollm2_80.ipynb) with "
                    "model = smollm2-135m-instruct-q4_1, max_items = 80, n_bootstrap = 1000, seed = 0\n")
    note = manuscript.source_note("crows-languages_g_indibias.md", "12_crows_languages.md")
    assert note.startswith("*Source:* kept run `12_crows_languages__model-g__dataset-indibias` (its records in "
                           "`paper/records/crows-languages/12_crows_languages__model-g__dataset-indibias`) "
                           "with model = gemma-3-270m-q4_k_m, dataset = indibias, method = causal, ")
    assert "max_pairs" not in note  # 0: no sample, every pair
