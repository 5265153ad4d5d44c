"""Findings of one kind are capped per file (issue 15): a 4 MB file of a million bad items is shown as
the first thousand of each kind and one more that says how many follow, and is still refused as a whole."""

from __future__ import annotations

import collections

from evalspec.analysis import MAX_PER_KIND, analyze
from evalspec.run.plan.skip_invalid import valid_part

LIMIT = MAX_PER_KIND


def flow_models(n: int) -> str:
    return "title: t\nmodels: [" + "a:b," * n + "]\n---\n- prompt: hi\n"


def test_a_million_kind_of_file_shows_each_kind_once_per_thousand(tmp_path):
    n = LIMIT * 3
    a = analyze(flow_models(n), tmp_path / "m.yml")
    counts = collections.Counter(f.code for f in a.findings)
    # Every model is an unknown provider; every one after the first is listed twice.
    assert counts == {"unknown-provider": LIMIT + 1, "duplicate-model": LIMIT + 1}
    for code, total in (("unknown-provider", n), ("duplicate-model", n - 1)):
        of_kind = [f for f in a.findings if f.code == code]
        last = of_kind[-1]
        # The summary is a true finding of its kind at its own place, in text order after the others.
        assert last.extra["more"] == total - LIMIT - 1
        assert f"and {total - LIMIT - 1:,} more '{code}' findings after this one" in last.message
        assert (last.span.start_line, last.span.start_col) > (of_kind[-2].span.start_line, of_kind[-2].span.start_col)
        assert all("more" not in f.extra for f in of_kind[:-1])
        assert text_at(a.text, last.span) == "a:b"
    assert a.omitted == []  # notes and warnings past the cap are counted, not kept


def text_at(text: str, span) -> str:
    line = text.split("\n")[span.start_line]
    return line[span.start_col:span.end_col]


def test_at_the_limit_nothing_is_summed_up(tmp_path):
    a = analyze(flow_models(LIMIT + 1), tmp_path / "m.yml")
    assert collections.Counter(f.code for f in a.findings)["unknown-provider"] == LIMIT + 1
    assert not a.omitted and all("more" not in f.extra for f in a.findings)


def test_omitted_errors_still_refuse_and_skip(tmp_path):
    # 1,500 prompts each with an error of the same kind, and one good prompt: every broken prompt is
    # skipped by --skip-invalid, not only those whose error is listed.
    text = "title: t\nmodels: [openai:gpt-4o-mini]\n---\n" + "".join(
        f"- id: p{i}\n  prompt: hi\n  should:\n    - $nope: 1\n" for i in range(1500)) + "- id: good\n  prompt: hi\n"
    a = analyze(text, tmp_path / "b.yml")
    assert sum(f.code == "unknown-function" for f in a.findings) == LIMIT + 1
    assert len(a.errors) == 1500  # what a run refuses, and counts
    part = valid_part(a)
    assert len(part.skipped) == 1500
    assert part.blueprint is not None and [p.id for p in part.blueprint.prompts] == ["good"]


def test_did_you_mean_searches_are_bounded_per_analysis():
    from evalspec.validation.suggest import closest, searches_limited

    assert closest("shuld", ["should", "prompt"]) == "should"  # outside an analysis: no limit
    with searches_limited(3):
        assert [closest(name, ["should"]) for name in ("shuld", "shoud", "shold", "shuld")] == ["should"] * 3 + [None]
    assert closest("shuldx", ["should"]) == "should"  # the limit ends with its block


def test_the_shown_findings_keep_their_hints(tmp_path):
    # 8,000 misspelt keys (more than the searches an analysis makes): the thousand shown all have a hint.
    text = "tests:\n- id: t\n  input: hi\n" + "".join(f"  criteriaa{i}: x\n" for i in range(8000))
    a = analyze(text, tmp_path / "s.eval.yaml")
    shown = [f for f in a.findings if f.code == "unknown-key"]
    assert len(shown) == LIMIT + 1
    assert all("criteria" in f.message and "did you mean" in f.message.lower() for f in shown), shown[0].message


def test_check_lists_the_capped_findings_and_counts_them_all(tmp_path, capsys):
    from evalspec.cli import main

    path = tmp_path / "m.yml"
    path.write_text("title: t\nmodels: [openai:gpt-4o-mini]\n---\n" + "".join(
        f"- id: p{i}\n  prompt: hi\n  should: [{{$nope: 1}}]\n" for i in range(LIMIT + 500)))
    code = main(["check", "--format", "concise", str(path)])
    out, err = capsys.readouterr()
    assert code == 1
    lines = [line for line in out.splitlines() if "unknown-function" in line]
    assert len(lines) == LIMIT + 1 and "and 499 more 'unknown-function' findings" in lines[-1]
    assert f"{LIMIT + 500:,} error(s)" in err


def test_warnings_past_the_cap_are_counted_not_kept(tmp_path, capsys):
    from evalspec.cli import main

    n = LIMIT * 2
    path = tmp_path / "m.yml"
    path.write_text(flow_models(n))
    a = analyze(path.read_text(), path)
    assert a.omitted == []  # unknown providers are notes and duplicates warnings: only counted
    assert main(["check", "--format", "concise", str(path)]) == 0
    err = capsys.readouterr().err
    assert f"0 error(s), {n - 1:,} warning(s), {n:,} info" in err  # the word the lines use: info[…]


def test_one_more(tmp_path):
    a = analyze(flow_models(LIMIT + 2), tmp_path / "m.yml")
    [last] = [f for f in a.findings if f.code == "unknown-provider" and "more" in f.extra]
    assert last.extra["more"] == 1 and "(and 1 more 'unknown-provider' finding after this one" in last.message
