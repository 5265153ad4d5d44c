"""A big comparison file is read entry by entry (`sources._weval_streamed`, bounded memory): the report
model and the page must be exactly what reading the whole file gives, for every shape the whole reading
accepts; shapes the streamed reading does not follow fall back to the whole reading."""

from __future__ import annotations

import io
import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalspec.json_stream import JsonReader
from evalspec.jsonio import dumps_bytes
from evalspec.report import ResultsError, load_results, sources
from evalspec.report.html import render_html
from evalspec.run.write.files import dumps_pretty


def _whole(path: Path) -> Any:
    return sources._weval_from_comparison(json.loads(path.read_bytes()), path)


def _streamed(path: Path) -> Any:
    return sources._weval_streamed(path)


def test_a_real_runs_comparison_reads_the_same_streamed(runs: dict[str, Path]) -> None:
    path = runs["weval"]
    whole, streamed = _whole(path), _streamed(path)
    assert streamed is not None
    assert streamed == whole
    assert any(c.status == "error" for c in whole.cells.values()) and any(c.points for c in whole.cells.values())
    assert render_html([streamed]) == render_html([whole])


def test_load_results_streams_from_the_size_bound(runs: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    called: list[Path] = []
    real = sources._weval_streamed

    def spy(path: Path) -> Any:
        called.append(path)
        return real(path)

    monkeypatch.setattr(sources, "_weval_streamed", spy)
    default = load_results(runs["weval"])
    assert called == []  # a small file is read whole
    monkeypatch.setattr(sources, "STREAM_FROM_BYTES", 0)
    assert load_results(runs["weval"]) == default
    assert called == [runs["weval"]]


def _variant(runs: dict[str, Path], tmp_path: Path, change: Any, *, pretty: bool = True) -> Path:
    data = json.loads(runs["weval"].read_bytes())
    change(data)
    out = tmp_path / runs["weval"].name
    out.write_bytes(dumps_pretty(data) if pretty else dumps_bytes(data))
    return out


def _multi_turn(d: dict[str, Any]) -> None:
    pid = next(iter(d["fullConversationHistories"]))
    for model in d["fullConversationHistories"][pid]:
        d["fullConversationHistories"][pid][model] += [{"role": "user", "content": "more"},
                                                        {"role": "assistant", "content": "again"}]


def _odd_fields(d: dict[str, Any]) -> None:
    d["config"]["prompts"][0]["description"] = "described"
    d["config"]["prompts"][0]["idealResponse"] = "ideal"
    d["config"]["prompts"].append("not a prompt")
    d["promptContexts"] = {}
    d["promptIds"].append("only-listed")
    cov = d["evaluationResults"]["llmCoverageScores"]
    pid = next(iter(cov))
    model = next(iter(cov[pid]))
    cov[pid][model]["unknownField"] = {"x": [1, 2.5, None]}
    cov[pid][model]["pointAssessments"].append({"keyPointText": "p", "coverageExtent": 0.25, "pathId": "path_1"})
    cov[pid][model]["pointAssessments"].append({"keyPointText": "q", "coverageExtent": 1, "pathId": "path_2"})
    d["evaluationResults"]["similarityMatrix"] = {"a": {"b": 0.5}}
    d["extraTop"] = [1, {"k": "v"}]


def _coverage_error(d: dict[str, Any]) -> None:
    cov = d["evaluationResults"]["llmCoverageScores"]
    for by_model in cov.values():
        for model in by_model:
            by_model[model] = {"error": "Judge failed"}
        break
    d["errors"] = {}


def _keys_reordered(d: dict[str, Any]) -> None:
    for key in ("config", "promptContexts", "allFinalAssistantResponses"):
        d[key] = d.pop(key)  # the big maps after the fields that name the models


def _maps_not_objects(d: dict[str, Any]) -> None:
    d["errors"] = "not a map"
    d["promptContexts"] = ["not", "a", "map"]
    d["config"] = "not a map"


def _no_coverage(d: dict[str, Any]) -> None:
    d["evaluationResults"] = {"llmCoverageScores": None}
    d["evalMethodsUsed"] = ["embedding"]
    d["fullConversationHistories"] = None


@pytest.mark.parametrize("change", [_multi_turn, _odd_fields, _coverage_error, _keys_reordered, _maps_not_objects,
                                    _no_coverage])
@pytest.mark.parametrize("pretty", [True, False])
def test_variants_read_the_same_streamed(runs: dict[str, Path], tmp_path: Path, change: Any, pretty: bool) -> None:
    path = _variant(runs, tmp_path, change, pretty=pretty)
    whole, streamed = _whole(path), _streamed(path)
    assert streamed is not None and streamed == whole


def _live(kind: type) -> int:
    import gc

    return sum(1 for o in gc.get_objects() if type(o) is kind)


def test_the_page_of_a_streamed_file_holds_a_chunk_of_cells_not_the_run(runs: dict[str, Path],
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A streamed reading keeps the file's entries on disk and makes each cell when the page reads it; the
    details blocks go to disk past their bound. The page is the whole reading's, byte for byte, and while
    it is made no more than a chunk of cells (and of prompts) exist at once: a stage that held every cell
    again fails here."""
    from evalspec.report import html
    from evalspec.report.model import CellResult, Item

    path = runs["weval"]
    whole = _whole(path)
    expected = render_html([whole])
    n_cells = len(whole.cells)
    del whole
    assert n_cells >= 6
    monkeypatch.setattr(html, "CHUNK", 1)
    expected_small_chunks = render_html([_whole(path)])
    monkeypatch.setattr(html._Blocks, "HELD_BYTES", 0)  # every details block on disk
    seen: list[tuple[int, int]] = []
    real_block = html._json_block

    def counting(block_id: str, value: Any) -> str:
        seen.append((_live(CellResult), _live(Item)))
        return real_block(block_id, value)

    monkeypatch.setattr(html, "_json_block", counting)
    streamed = _streamed(path)
    assert streamed is not None
    page = render_html([streamed])
    assert page == expected_small_chunks and page != expected  # (the chunk size shows in the page)
    models = len(streamed.models)
    assert len(seen) > 2 and max(cells for cells, _ in seen) <= models < n_cells
    assert max(items for _, items in seen) <= 1
    assert len(streamed.cells) == n_cells and dict(streamed.cells) == dict(_whole(path).cells)


def _list_entry(d: dict[str, Any]) -> None:
    d["allFinalAssistantResponses"][next(iter(d["allFinalAssistantResponses"]))] = ["not", "a", "map"]


def _list_coverage(d: dict[str, Any]) -> None:
    d["evaluationResults"]["llmCoverageScores"] = [1]


@pytest.mark.parametrize("change", [_list_entry, _list_coverage])
def test_shapes_it_does_not_follow_fall_back_to_the_whole_reading(runs: dict[str, Path], tmp_path: Path,
                                                                   change: Any,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    path = _variant(runs, tmp_path, change)
    with pytest.raises(sources._Unusual):
        _streamed(path)
    monkeypatch.setattr(sources, "STREAM_FROM_BYTES", 0)
    with pytest.raises(ResultsError, match="does not have the shape"):
        load_results(path)


def test_broken_json_is_named_streamed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sources, "STREAM_FROM_BYTES", 0)
    bad = tmp_path / "x_comparison.json"
    bad.write_text('{"allFinalAssistantResponses": {"p": {"m": "a"}}, "errors": {"p": ')
    with pytest.raises(ResultsError, match="not JSON"):
        load_results(bad)
    other = tmp_path / "y_comparison.json"
    other.write_text('{"something": "else"}')
    with pytest.raises(ResultsError, match="is not a results file"):
        load_results(other)


# --- the reader itself, with tiny chunks so every value crosses a buffer boundary ------------------------

_scalars = st.none() | st.booleans() | st.integers(-10**20, 10**20) | st.text(max_size=12) | st.floats(
    allow_nan=False, allow_infinity=False)
_values = st.recursive(_scalars, lambda kids: st.lists(kids, max_size=5) | st.dictionaries(st.text(max_size=6), kids,
                                                                                             max_size=5), max_leaves=30)


def _walk(reader: JsonReader) -> Any:
    """Rebuild a value through entries()/elements() (objects and arrays) and value() (the rest)."""
    c = reader.peek()
    if c == "{":
        return {k: _walk(reader) for k in reader.entries()}
    if c == "[":
        return [_walk(reader) for _ in reader.elements()]
    return reader.value()


@settings(max_examples=300, derandomize=True, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(value=_values, chunk=st.integers(1, 9), indent=st.sampled_from([None, 2]))
def test_reader_gives_what_json_loads_gives(value: Any, chunk: int, indent: int | None) -> None:
    text = json.dumps(value, indent=indent, ensure_ascii=False)
    reader = JsonReader(io.BytesIO(text.encode("utf-8")), chunk=chunk)
    got = _walk(reader)
    reader.end()
    assert got == json.loads(text)
    reader = JsonReader(io.BytesIO(text.encode("utf-8")), chunk=chunk)
    assert reader.value() == json.loads(text)


@pytest.mark.parametrize("text", ["1.5e-3", "-0.25", "12345678901234567890", '{"a": 1e+2}', "[1.0, 2]"])
def test_numbers_cut_by_the_buffer_are_read_whole(text: str) -> None:
    for chunk in range(1, len(text) + 1):
        reader = JsonReader(io.BytesIO(text.encode()), chunk=chunk)
        got = _walk(reader)
        assert got == json.loads(text) and not (isinstance(got, float) and math.isnan(got))


@pytest.mark.parametrize("text", ['{"a" 1}', '{"a": 1 "b": 2}', "[1 2]", '{"a": 1} x', "{1: 2}"])
def test_reader_refuses_what_is_not_json(text: str) -> None:
    reader = JsonReader(io.BytesIO(text.encode()), chunk=3)
    with pytest.raises(ValueError):
        _walk(reader)
        reader.end()




def test_the_page_written_in_pieces_is_the_rendered_page(runs: dict[str, Path], tmp_path: Path) -> None:
    """write_report writes the HTML a piece at a time: the same bytes as the page rendered whole, for one
    run and for the comparison of two."""
    from evalspec.report import write_report
    from evalspec.report.diff import diff_runs

    run = load_results(runs["weval"])
    one = write_report([runs["weval"]], tmp_path / "one.html")
    assert one.read_bytes() == render_html([run]).encode("utf-8")
    two = write_report([runs["weval"], runs["weval"]], tmp_path / "two.html")
    assert two.read_bytes() == render_html([run, run], diff_runs(run, run)).encode("utf-8")
    assert b"evalspec-details-0-0" in one.read_bytes()
