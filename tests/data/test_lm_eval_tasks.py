"""lm-eval task folders written from the registered datasets (polybias lm-eval-tasks).

That lm-eval itself reads them and gets polybias's numbers is tests/peers/test_lm_eval.py."""

import importlib.util

import pandas as pd
import pytest
import yaml
from polybias import cli
from polybias.data import crowspairs, lm_eval_tasks
from polybias.data.lm_eval_tasks import LmEvalTaskError, write_tasks


class _TaskLoader(yaml.SafeLoader):
    """Reads lm-eval's ``!function module.name`` tags as plain strings."""


_TaskLoader.add_constructor("!function", lambda loader, node: f"!function {loader.construct_scalar(node)}")


def _read_task(path):
    return yaml.load(path.read_text(encoding="utf-8"), Loader=_TaskLoader)


def _utils(folder):
    spec = importlib.util.spec_from_file_location("task_utils", folder / "utils.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_selection_and_names():
    assert lm_eval_tasks.selection(["kaneko2022"]) == [("kaneko2022", "ja"), ("kaneko2022", "ru")]
    assert lm_eval_tasks.selection(["indibias", "kaneko2022"], ["hi"]) == [("indibias", "hi")]
    every = lm_eval_tasks.selection()
    assert len(every) == sum(len(v) for v in crowspairs.DATASETS.values())
    assert len({lm_eval_tasks.task_name(d, lang) for d, lang in every}) == len(every)
    with pytest.raises(LmEvalTaskError, match="unknown dataset.*nope"):
        lm_eval_tasks.selection(["nope"])
    with pytest.raises(LmEvalTaskError, match="language.*xx"):
        lm_eval_tasks.selection(["kaneko2022"], ["ja", "xx"])


def test_utils_score_as_lm_eval_crows_pairs(tmp_path, mirror):
    write_tasks(tmp_path / "t", ["crows-pairs-gamboa"])
    utils = _utils(tmp_path / "t")
    assert utils.doc_to_choice({"sent_more": "a", "sent_less": "b"}) == ["a", "b"]
    assert utils.process_results({}, [(-3.0, False), (-5.5, True)]) == {
        "likelihood_diff": 2.5, "pct_stereotype": 1.0}
    assert utils.process_results({}, [(-5.5, False), (-3.0, False)])["pct_stereotype"] == 0.0
    assert utils.process_results({}, [(-4.0, False), (-4.0, False)]) == {  # a tie is not stereotyped
        "likelihood_diff": 0.0, "pct_stereotype": 0.0}


def test_written_tasks_carry_data_licence_and_citation(tmp_path, mirror):
    out = tmp_path / "tasks"
    names = write_tasks(out, ["kaneko2022", "crows-pairs-revised"], ["ja", "fr"])
    assert names == ["polybias_crows_kaneko2022_ja", "polybias_crows_crows_pairs_revised_fr"]
    assert sorted(p.name for p in out.glob("*.yaml")) == sorted(f"{n}.yaml" for n in names)
    for (dataset, language), name in zip([("kaneko2022", "ja"), ("crows-pairs-revised", "fr")], names,
                                         strict=True):
        text = (out / f"{name}.yaml").read_text(encoding="utf-8")
        task = _read_task(out / f"{name}.yaml")
        card = crowspairs.dataset_card(dataset)
        assert task["task"] == name and task["tag"] == ["polybias_crows"]
        assert task["dataset_path"] == "csv" and task["test_split"] == "test"
        assert task["doc_to_choice"] == "!function utils.doc_to_choice"
        assert task["process_results"] == "!function utils.process_results"
        assert task["metadata"]["licence"] == card["licence"]
        assert task["metadata"]["citation"] == card["citation"]
        assert f"# Licence: {card['licence']}" in text
        csv_path = task["dataset_kwargs"]["data_files"]["test"]
        assert csv_path == str((out / "data" / f"{dataset}_{language}.csv").resolve())
        written = pd.read_csv(csv_path, dtype=str, keep_default_na=False)
        pairs = lm_eval_tasks.task_pairs(dataset, language)
        assert list(written.columns) == list(lm_eval_tasks.CSV_COLUMNS)
        assert written["sent_more"].tolist() == pairs["sent_more"].tolist()
        assert written["sent_less"].tolist() == pairs["sent_less"].tolist()
        assert written["stereo_antistereo"].tolist() == pairs["direction"].tolist()
        assert written["pair_id"].tolist() == pairs["pair_id"].astype(str).tolist()
        assert task["metadata"]["pairs"] == len(pairs)
        assert task["metadata"]["pairs_dropped"] == pairs.attrs["n_dropped"]
    # the revised French pairs with an empty or two identical sentences are left out
    assert _read_task(out / f"{names[1]}.yaml")["metadata"]["pairs_dropped"] == 4


def test_existing_folder_is_refused_unless_overwrite(tmp_path, mirror):
    out = tmp_path / "tasks"
    out.mkdir()
    (out / "stale.yaml").write_text("x")
    with pytest.raises(LmEvalTaskError, match="exists"):
        write_tasks(out, ["kaneko2022"], ["ru"])
    assert write_tasks(out, ["kaneko2022"], ["ru"], overwrite=True) == ["polybias_crows_kaneko2022_ru"]
    assert not (out / "stale.yaml").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tasks"]  # no temporary folder left


def test_a_failure_leaves_no_folder(tmp_path, monkeypatch, mirror):
    calls = []

    def failing(dataset, language):
        calls.append(language)
        if len(calls) == 2:
            raise LmEvalTaskError("boom")
        return crowspairs.load_crows_pairs(dataset, language, on_invalid="drop", max_diff=None)

    monkeypatch.setattr(lm_eval_tasks, "task_pairs", failing)
    with pytest.raises(LmEvalTaskError, match="boom"):
        write_tasks(tmp_path / "tasks", ["kaneko2022"])
    assert calls == ["ja", "ru"]
    assert list(tmp_path.iterdir()) == []


def test_cli(tmp_path, capsys, mirror):
    assert cli.main(["lm-eval-tasks", "--out", str(tmp_path / "a"), "--dataset", "nope"]) == 2
    assert "unknown dataset" in capsys.readouterr().err
    assert not (tmp_path / "a").exists()
    assert cli.main(["lm-eval-tasks", "--out", str(tmp_path / "a"), "--dataset", "kaneko2022",
                     "--language", "ja"]) == 0
    assert "polybias_crows_kaneko2022_ja" in capsys.readouterr().out
    assert (tmp_path / "a" / "polybias_crows_kaneko2022_ja.yaml").is_file()
    assert cli.main(["lm-eval-tasks", "--out", str(tmp_path / "a"), "--dataset", "kaneko2022"]) == 2
    assert "exists; choose a new folder or pass overwrite=True (--force)" in capsys.readouterr().err
    assert cli.main(["lm-eval-tasks", "--out", str(tmp_path / "a"), "--dataset", "kaneko2022",
                     "--force"]) == 0  # as the error says
    assert (tmp_path / "a" / "polybias_crows_kaneko2022_ru.yaml").is_file()


def test_eurogest_tasks_per_language(tmp_path, mirror):
    out = tmp_path / "eurogest"
    names = write_tasks(out, ["eurogest", "eurogest-neutral"], ["mt", "ga"])
    assert names == ["polybias_crows_eurogest_mt", "polybias_crows_eurogest_neutral_mt",
                     "polybias_crows_eurogest_neutral_ga"]
    assert len(lm_eval_tasks.selection(["eurogest"])) == 20
    assert len(lm_eval_tasks.selection(["eurogest-neutral"])) == 29
    task = _read_task(out / "polybias_crows_eurogest_mt.yaml")
    assert task["metadata"]["pairs"] == 68 and task["metadata"]["licence"].startswith("Apache-2.0")
    assert "Rowe" in task["metadata"]["citation"] and "Pikuliak" in task["metadata"]["citation"]
    written = pd.read_csv(task["dataset_kwargs"]["data_files"]["test"], dtype=str, keep_default_na=False)
    assert len(written) == 68 and set(written.stereo_antistereo) == {"stereo"}
    neutral = _read_task(out / "polybias_crows_eurogest_neutral_ga.yaml")
    assert neutral["metadata"]["pairs"] == 1638 and neutral["metadata"]["pairs_dropped"] == 0
