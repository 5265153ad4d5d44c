"""A plan's fingerprints (run/items.py): the compact Fingerprints reads as the dict of hexadecimal strings
it replaced, key for key and in order, repeated ids included; and the journal's header holds exactly that
dict."""

from __future__ import annotations

from pathlib import Path

from evalspec.analysis import analyze, analyze_file
from evalspec.run.journal.run_store import read_header
from evalspec.run.options import RunOptions
from evalspec.run.plan.items import Fingerprints, fingerprints, planned_fingerprints
from evalspec.run.plan.plan_for import plan_for


def _blueprint(n: int) -> str:
    return "title: t\nmodels: [echo]\n---\n" + "".join(
        f'- id: p{i}\n  prompt: "q {i}"\n  should:\n    - $contains: "q {i}"\n' for i in range(n))


def test_fingerprints_read_as_the_dict() -> None:
    analysis = analyze(_blueprint(40), "b.weval.yml", env={})
    whole = fingerprints(analysis)
    keep = {f"p{i}" for i in range(0, 40, 3)}
    compact = planned_fingerprints(analysis, keep)
    expected = {k: v for k, v in whole.items() if k in keep}
    assert list(compact) == list(expected) and len(compact) == len(expected)
    assert list(compact.items()) == list(expected.items()) and dict(compact) == expected
    assert compact["p3"] == expected["p3"] and "p4" not in compact and "p3" in compact


def test_a_repeated_id_keeps_its_place_and_takes_the_later_value() -> None:
    pairs = [("a", b"\x01" * 8), ("b", b"\x02" * 8), ("a", b"\x03" * 8)]
    expected: dict[str, str] = {}
    for k, v in pairs:
        expected[k] = v.hex()
    assert list(Fingerprints(pairs).items()) == list(expected.items())


def test_the_journal_header_holds_the_plans_fingerprints(tmp_path: Path) -> None:
    path = tmp_path / "b.weval.yml"
    path.write_text(_blueprint(5), encoding="utf-8")
    analysis = analyze_file(path, env={})
    expected = fingerprints(analysis)
    plan = plan_for(analysis, RunOptions(output=tmp_path / "out", env={}))
    import asyncio

    from evalspec.run.runner import run

    async def consume() -> None:
        async for _ in run(plan, RunOptions(output=tmp_path / "out", env={})):
            pass

    asyncio.run(consume())
    journal = next((tmp_path / "out").rglob("*.run.db"))
    header = read_header(journal)
    assert header is not None and dict(header.fp) == expected and list(header.fp) == list(expected)


def test_a_big_header_is_read_whole_or_without_its_fingerprints(tmp_path: Path) -> None:
    """A 100,000-prompt run's items are many rows: the header reads them whole; a report asks for it
    without the fingerprints, which are then never read."""
    import dataclasses

    from evalspec.run.events import Cell
    from evalspec.run.journal.records import Generated, RunHeader
    from evalspec.run.journal.run_store import open_journal, records

    fp = {f"prompt-{i}": f"{i:016x}" for i in range(60_000)}
    header = RunHeader(kind="weval", file="/x/b.weval.yml", run_label="abc", started="2026-01-01T00:00:00Z",
                       path="/x/b.weval.yml", select=("p*",), fp=fp, config_id="b", systems={"m": None})
    path = tmp_path / "abc.run.db"
    journal, _ = open_journal(path, resume=False, header=header)
    with journal:
        journal.write(Generated(Cell("prompt-1", "m"), 0, "an answer", (3, 4), 12.5, False))
    assert path.stat().st_size > 1 << 20
    assert read_header(path) == header
    assert read_header(path, fingerprints=False) == dataclasses.replace(header, fp={})
    every = list(records(path))
    assert [r for r in every if isinstance(r, Generated)] == list(records(path, Generated)) != []
    assert list(records(path, RunHeader)) == [header]
