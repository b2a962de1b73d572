"""Every notebook's parameters, declared once: their help, allowed values and ranges.

:data:`NOTEBOOKS` maps each notebook to a :class:`Notebook`: one :class:`Parameter` per
parameter of its cell tagged ``parameters`` (the help, the allowed values or the numeric
range) and the checks that relate several parameters. Allowed values the library knows
(datasets, methods, languages, poolings, ...) are read from the library, never re-typed.

Where things live:

* the framework (:class:`Notebook`, :class:`Parameter`, :class:`ParameterError`), the
  helpers that declare a parameter and the parameters and checks several notebooks share:
  :mod:`polybias.studies.notebook_parameters`;
* each notebook's declaration, beside its study: ``NOTEBOOK_PARAMETERS`` of the study
  module the notebook runs (e.g. :data:`polybias.studies.crows_pairs.NOTEBOOK_PARAMETERS`
  for ``05_crows_pairs``), with its check; ``08_hidden_states``'s stays here, as its check
  reads a template book (:mod:`polybias.studies.template_books`, whose import reads
  ``data/measures.yaml``, which importing :mod:`polybias.studies.hidden_states` does not);
* here: :data:`NOTEBOOKS`, gathered from them in the order of the notebooks, and what
  reads it.

Two things read the declaration:

* :func:`check_parameters`, which a notebook calls with its name and its parameters right
  after the parameters cell, so a bad value stops the run before anything is loaded or
  written, with a one-line error naming the notebook, the parameter and what it may be;
* the help comments of the parameters cells, which are generated from it:
  ``python -m polybias.studies.parameters`` reports every comment that differs from its
  declaration (exit status 1) and ``--write`` rewrites them, so the help cannot drift.
"""

from __future__ import annotations

import argparse
import ast
import inspect
import io
import re
import sys
import tokenize
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from polybias import paths
from polybias.engines import hidden_states as hidden_states_engine
from polybias.models import load_registry
from polybias.studies import (
    agreement,
    categorical_bias,
    ceat,
    crows_languages,
    crows_pairs,
    cultural_interactions,
    debiasing,
    eurogest,
    external_validity,
    gest,
    logprob_context,
    model_profile,
    real_models,
    seat,
    stereoset,
    validity,
    weat,
)
from polybias.studies.notebook_parameters import (
    HUB,
    OUTPUT_DIR,
    STATIC_FILE_FORMATS,
    TABLE_FILE,
    Notebook,
    Parameter,
    ParameterError,
    crows_method_refusal,
    free,
    integer,
    model_engine,
)
from polybias.studies.template_books import template_book

__all__ = ["NOTEBOOKS", "STATIC_FILE_FORMATS", "Notebook", "Parameter", "ParameterError",
           "check_parameters", "crows_method_refusal", "defaults", "help_differences",
           "load_registry", "main", "notebook_sources"]


# ------------------------------------------------------------------ notebook 08's parameters
# Kept here rather than in polybias.studies.hidden_states: the check reads a template book,
# and importing polybias.studies.template_books reads data/measures.yaml, which importing
# polybias.studies.hidden_states does not.

def _check_08_hidden_states(*, templates, template, slot):
    if slot not in template_book(templates).template(template).slots:
        raise ParameterError(f"template {template!r} has no slot {slot!r}")


#: The parameters of notebook 08_hidden_states: their help, allowed values and checks.
_HIDDEN_STATES: Notebook = Notebook({
    "model": free("registered encoder or MLM (configs/models.yaml or POLYBIAS_MODELS_FILE), "
                  + HUB),
    **model_engine(),
    "templates": free("template file in data/templates, or seed004_countries (all the "
                      "authors' countries)"),
    "template": free("template whose identity slot is analysed"),
    "slot": free("the identity slot"),
    "group_feature": free("entry feature the groups of the 2-D views come from"),
    "layer_view": integer("layer whose states are projected (-1: last; all layers flattened "
                          "if 99)", low=None),
    "views": Parameter("2-D views drawn, with their η²: {values} (tsne: chaotic, its layout "
                       "and η² change with the CPU's kernels, so not drawn by default)",
                       values=hidden_states_engine.METHODS, each=True),
    "seed": integer("seed of the TruncatedSVD and t-SNE projections ({range})"),
    "output_dir": OUTPUT_DIR,
    "table_file": free(TABLE_FILE.format("hidden_minilm-l6")),
}, _check_08_hidden_states)


#: Notebook name -> its parameters and their checks, each declared beside its study
#: (``NOTEBOOK_PARAMETERS`` of the study module), in the order of the notebooks.
NOTEBOOKS: dict[str, Notebook] = {
    "01_weat": weat.NOTEBOOK_PARAMETERS,
    "02_seat": seat.NOTEBOOK_PARAMETERS,
    "03_ceat": ceat.NOTEBOOK_PARAMETERS,
    "04_logprob_context": logprob_context.NOTEBOOK_PARAMETERS,
    "05_crows_pairs": crows_pairs.NOTEBOOK_PARAMETERS,
    "06_categorical_bias": categorical_bias.NOTEBOOK_PARAMETERS,
    "07_cultural_interactions": cultural_interactions.NOTEBOOK_PARAMETERS,
    "08_hidden_states": _HIDDEN_STATES,
    "09_debiasing": debiasing.NOTEBOOK_PARAMETERS,
    "10_validity": validity.NOTEBOOK_PARAMETERS,
    "11_agreement": agreement.NOTEBOOK_PARAMETERS,
    "12_crows_languages": crows_languages.NOTEBOOK_PARAMETERS,
    "13_external_validity": external_validity.NOTEBOOK_PARAMETERS,
    "14_stereoset": stereoset.NOTEBOOK_PARAMETERS,
    "15_gest": gest.NOTEBOOK_PARAMETERS,
    "16_eurogest": eurogest.NOTEBOOK_PARAMETERS,
    "17_real_models": real_models.NOTEBOOK_PARAMETERS,
    "18_profile": model_profile.NOTEBOOK_PARAMETERS,
}


def check_parameters(notebook: str, **parameters: Any) -> None:
    """Check the parameters of ``notebook`` against its declaration in :data:`NOTEBOOKS`.

    Parameters
    ----------
    notebook : str
        The notebook's name, e.g. ``"05_crows_pairs"``.
    \\*\\*parameters
        The notebook's parameters by name: at least every one that has allowed values, a
        range, or a check relating it to others (:attr:`Notebook.checked`).

    Raises
    ------
    ParameterError
        One line naming the notebook, the parameter and what it may be: a value not
        allowed or out of range, a parameter missing or not declared, an unknown notebook.
    polybias.models.ModelError
        A registered model run on a language its entry does not list (the check of the
        lower layer keeps its error); other lower-layer checks raise ``ValueError``.

    Examples
    --------
    >>> check_parameters("11_agreement", language="en", ps=[0.5], seeds=3, measures=["weat"],
    ...                  lm_n_sentences=10, lm_n_pairs=10, weat_n_sentences=10)
    >>> check_parameters("11_agreement", language="en", ps=[0.5], seeds=0, measures=["weat"],
    ...                  lm_n_sentences=10, lm_n_pairs=10, weat_n_sentences=10)
    Traceback (most recent call last):
    ...
    polybias.studies.notebook_parameters.ParameterError: 11_agreement: seeds must be an integer >= 1, got 0
    >>> check_parameters("11_agreement", seeds=3)
    Traceback (most recent call last):
    ...
    polybias.studies.notebook_parameters.ParameterError: 11_agreement: missing parameter(s) language,
    lm_n_pairs, lm_n_sentences, measures, ps, weat_n_sentences
    """
    if notebook not in NOTEBOOKS:
        raise ParameterError(f"no parameter checks for notebook {notebook!r}; known: "
                             f"{', '.join(sorted(NOTEBOOKS))}")
    declared = NOTEBOOKS[notebook]
    missing = sorted(set(declared.checked) - set(parameters))
    extra = sorted(set(parameters) - set(declared.parameters))
    if missing or extra:
        parts = ([f"missing parameter(s) {', '.join(missing)}"] if missing else []) + \
            ([f"undeclared parameter(s) {', '.join(extra)}"] if extra else [])
        raise ParameterError(f"{notebook}: {'; '.join(parts)}")
    try:
        for name, value in parameters.items():
            declared.parameters[name].check(name, value)
        if declared.check is not None:
            together = inspect.signature(declared.check).parameters
            declared.check(**{name: parameters[name] for name in together})
    except ParameterError as exc:
        raise ParameterError(f"{notebook}: {exc}") from None


# ------------------------------------------------------------------ the help comments

def _cell_lines(lines: list[str]) -> range:
    """The line numbers of the first cell tagged ``parameters`` (its code lines)."""
    start = next((i for i, line in enumerate(lines)
                  if line.startswith("# %%") and re.search(r"tags=\[[^]]*\"parameters\"", line)),
                 None)
    if start is None:
        raise ParameterError("no cell tagged 'parameters'")
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("# %%")), len(lines))
    return range(start + 1, end)


def _split(line: str) -> tuple[str, str, str] | None:
    """``name: type = default  # help`` -> (name, the code before the comment, the help)."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(line).readline))
    except (tokenize.TokenError, SyntaxError):
        return None
    if not tokens or tokens[0].type != tokenize.NAME or tokens[0].start[1] != 0:
        return None
    comment = next((t for t in tokens if t.type == tokenize.COMMENT), None)
    if comment is None:
        return tokens[0].string, line.rstrip("\n"), ""
    return tokens[0].string, line[:comment.start[1]].rstrip(), comment.string[1:].strip()


def help_differences(path: str | Path, write: bool = False) -> list[str]:
    """Where a notebook's parameters cell differs from its declaration in :data:`NOTEBOOKS`.

    Parameters
    ----------
    path : str or Path
        A notebook's jupytext source (``notebooks/05_crows_pairs.py``).
    write : bool
        Rewrite the help comments that differ from their declaration.

    Returns
    -------
    list of str
        One line per difference: a help comment that is not the declared help, or a default
        that is not the library constant its declaration names (both rewritten when
        ``write``), a parameter of the cell that is not declared, or one declared that the
        cell lacks (neither of these two is fixed by ``write``).
    """
    path = Path(path)
    declared = NOTEBOOKS.get(path.stem)
    if declared is None:
        return [f"{path.name}: notebook not declared in polybias.studies.parameters.NOTEBOOKS"]
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    found: list[str] = []
    problems: list[str] = []
    for i in _cell_lines(lines):
        parts = _split(lines[i])
        if parts is None:
            continue
        name, code, comment = parts
        found.append(name)
        if name not in declared.parameters:
            problems.append(f"{path.name}: parameter {name!r} is not declared")
            continue
        parameter = declared.parameters[name]
        if parameter.default is not None:
            target, _, literal = code.partition("=")
            value = parameter.default_value()
            try:
                given = ast.literal_eval(literal.strip())
            except (ValueError, SyntaxError):
                given = None
            if given != value or type(given) is not type(value):
                problems.append(f"{path.name}: the default of {name!r} is {literal.strip()}, not "
                                f"{parameter.default} ({value!r})")
                code = f"{target.rstrip()} = {value!r}"
                lines[i] = f"{code}  # {comment}\n" if comment else f"{code}\n"
        wanted = parameter.render()
        if comment != wanted:
            problems.append(f"{path.name}: help of {name!r} differs from its declaration")
            lines[i] = f"{code}  # {wanted}\n"
    problems += [f"{path.name}: declared parameter {name!r} is not in the parameters cell"
                 for name in declared.parameters if name not in found]
    if write and problems:
        path.write_text("".join(lines), encoding="utf-8")
    return problems


def defaults(notebook: str) -> dict[str, Any]:
    """The default values of a notebook's parameters, read from its parameters cell.

    Parameters
    ----------
    notebook : str
        The notebook's name, e.g. ``"05_crows_pairs"``.

    Returns
    -------
    dict
        Parameter name -> its default (a Python literal), in the order of the cell.

    Raises
    ------
    ParameterError
        If the notebook has no parameters cell or a default is not a literal.
    """
    path = paths.project_root() / "notebooks" / f"{notebook}.py"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    values: dict[str, Any] = {}
    for statement in ast.parse("".join(lines[i] for i in _cell_lines(lines))).body:
        if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
            try:
                values[statement.target.id] = ast.literal_eval(statement.value)
            except ValueError:
                raise ParameterError(f"{path.name}: the default of {statement.target.id!r} is "
                                     "not a literal") from None
    return values


def notebook_sources() -> list[Path]:
    """The jupytext sources of the numbered notebooks, in order."""
    return sorted((paths.project_root() / "notebooks").glob("[0-9][0-9]_*.py"))


def main(argv: Sequence[str] | None = None) -> int:
    """Check (default) or rewrite (``--write``) the help comments of the parameters cells.

    Returns the exit status: 0 when every cell matches its declaration, else 1 after
    printing the differences (those that ``--write`` fixed are printed too).
    """
    parser = argparse.ArgumentParser(prog="python -m polybias.studies.parameters",
                                     description=main.__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path,
                        help="jupytext sources; default: every numbered notebook")
    parser.add_argument("--write", action="store_true", help="rewrite the help comments")
    args = parser.parse_args(argv)
    problems = [p for source in args.notebooks or notebook_sources()
                for p in help_differences(source, write=args.write)]
    for problem in problems:
        print(problem)
    return 1 if problems and not args.write else 0


if __name__ == "__main__":
    sys.exit(main())
