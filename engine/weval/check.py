"""Checking a Weval blueprint and building its normalized model in one walk over the located tree.

Rules follow what the reference (weval-org/app) does (and its exact messages), plus findings for
what it silently accepts or drops. Every finding sits on the key or
value it is about; a finding with an obvious repair carries it.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from .. import item_processes
from ..file_source import DiskSource, FileSource
from ..findings import Edit, Finding, Findings, Fix, Related, Severity, Span, Tag, replace
from ..item_processes import Shared
from ..registry.weval import HEADER, MESSAGE, POINT, PROMPT, PROMPT_MARKERS, REGISTRY
from ..registry.weval_functions import POINT_FUNCTIONS, Arg, foreign_name, resolve_function
from ..source import (
    LazyItems,
    Mapping,
    Node,
    ParsedFile,
    Scalar,
    Sequence,
    findings_within,
    is_null,
    is_number,
    is_str,
    moved_finding,
    moved_span,
    node_type_name,
    parse_yaml,
    shift_span,
    shifted_finding,
    spans_within,
    to_python,
    truthy,
)
from ..text_lines import Lines
from ..validation.objects import check_object, check_value, first_line_span
from ..validation.suggest import closest
from ..validation.yaml_text import entry_span, flow, quote
from .functions_check import check_function_arg
from .ids import UNDEFINED, blueprint_id, blueprint_id_problem, hash_id, stable_json
from .ids import quote_json as _quote
from .js_values import ReferenceRejects, has_merge_key, js_keys, js_plain, js_prompt_id, merged_mapping
from .js_values import truthy as js_truthy
from .model import (
    Blueprint,
    Judge,
    Message,
    ModelRef,
    Point,
    Prompt,
    grouped_by_path,
    reference_fn_name,
    reference_points,
)
from .models import KNOWN_PROVIDERS, find_models_dir, load_collections, parse_model_id
from .plain_prompt import persisted_plain, plain_reference
from .prompt_store import PromptCollector, adopt_shapes, encode, shape_names, shapes_since
from .reference_form import (
    evaluator_points,
    normalize_tags,
    persisted,
    reference_config,
    reference_header,
    validate_prompt,
)
from .reference_form import reference_prompt as weval_prompt


@dataclass
class WevalResult:
    blueprint: Blueprint | None
    findings: Findings
    # Where each prompt's rubric points and messages came from, for hover, lenses and symbols.
    prompt_nodes: list[Mapping] = field(default_factory=list)
    header_node: Mapping | None = None
    # The model collections (models/*.json, "CORE" → its ids) as the check read them through its source,
    # for completion, hover and navigation: the same ones the diagnostics saw, unsaved edits included.
    collections: dict[str, list[str]] = field(default_factory=dict)
    models_dir: Path | None = None  # the folder they were read from (go to a collection's file)
    notes: Any = None  # what `note` noted of each stored prompt (check_weval)


def check_weval(parsed: ParsedFile, path: Path | str | None = None, *, models_dir: Path | None = None,
                cache: PromptCache | None = None, source: FileSource | None = None,
                keep_prompts: bool = True, note: Callable[[], Any] | None = None,
                processes: int | None = 1) -> WevalResult:
    """Check one blueprint. `source` gives the model collections (`models/*.json`) it refers to
    (None: the disk). `keep_prompts=False` (`evalspec check`, which reads only the findings): each prompt is
    checked and dropped, the blueprint's `prompts` stay empty, and what only a kept prompt carries (its
    persisted reference form, its points as Weval's evaluator reads them) is not made. `note` (a run's check):
    makes an object whose `add(prompt)` is given each prompt as it is stored, in order, then set as the
    result's `notes`, its `of` the blueprint's `prompts` (what a run's plan reads instead of decoding each
    stored prompt again); what it makes has an `extend(other)`, for the prompts of another process.
    `processes`: a streamed list of prompts read in that many processes (None: as item_processes.parts
    says); raises item_processes.Unshared when the file must be read again in one."""
    ctx = _Context(parsed, Path(path) if path else None, models_dir, cache, source or DiskSource())
    ctx.keep_prompts = keep_prompts
    ctx.note = note if keep_prompts else None
    ctx.processes = processes
    return ctx.run()


class PromptCache:
    """Checked prompts kept between edits (the editor's): a prompt whose list item has the same text
    as before, under an unchanged header, is not checked again. Entries are never changed: a prompt
    that moved comes back as a copy with shifted spans (and findings), so an analysis already handed
    out keeps describing its own text."""

    def __init__(self) -> None:
        self.entries: dict[str, tuple[str, Prompt | None, list[Finding], int]] = {}
        self.used: dict[str, tuple[str, Prompt | None, list[Finding], int]] = {}

    def lookup(self, item_text: str, node: Node, header: str,
               document: int) -> tuple[Prompt | None, list[Finding]] | None:
        entry = self.used.get(item_text) or self.entries.get(item_text)
        if entry is None or entry[0] != header:
            return None
        _, prompt, findings, line = entry
        delta = node.span.start_line - line
        if delta:
            findings = [shifted_finding(f, delta) for f in findings]
        if prompt is not None and (delta or prompt.document != document):
            prompt = shifted_prompt(prompt, delta, document)
        self.used[item_text] = (header, prompt, findings, node.span.start_line)
        return prompt, findings

    def store(self, item_text: str, node: Node, header: str, prompt: Prompt | None,
              findings: list[Finding]) -> None:
        self.used[item_text] = (header, prompt, findings, node.span.start_line)

    def rotate(self) -> None:
        self.entries, self.used = self.used, {}


def shifted_prompt(p: Prompt, delta: int, document: int) -> Prompt:
    """A copy of a checked prompt `delta` lines further down, in document `document`."""
    return p.evolve(
        span=shift_span(p.span, delta), document=document,
        id_span=shift_span(p.id_span, delta) if p.id_span is not None else None,
        messages=[m.evolve(span=shift_span(m.span, delta)) for m in p.messages],
        should=[pt.evolve(span=shift_span(pt.span, delta)) for pt in p.should],
        should_not=[pt.evolve(span=shift_span(pt.span, delta)) for pt in p.should_not])


# The prompt fields `_prompt` checks itself (check_object only checks their keys)
_PROMPT_HANDLED = frozenset(("should", "should_not", "messages", "system", "id", "prompt"))

_SPACES = re.compile(r"\s*")
_QUOTED_FN = re.compile(r"\$([A-Za-z_]\w*)\s*:\s*(.*)\Z", re.S)


def _items_of(docs: list[Any]) -> Iterator[tuple[Node, int]]:
    """The prompt items of the documents after the header: a list's items, or the document itself."""
    for d in docs:
        if isinstance(d.root, Sequence):
            for p in d.root.items:
                yield p, d.index
        else:
            yield d.root, d.index


class _Context:
    def __init__(self, parsed: ParsedFile, path: Path | None, models_dir: Path | None,
                 cache: PromptCache | None, source: FileSource) -> None:
        self.parsed = parsed
        self.cache = cache
        self.path = path
        self.out = Findings()
        self.source = source
        self.models_dir = models_dir if models_dir is not None else find_models_dir(path, source)
        self.point_defs: dict[str, Node] = {}
        self.point_def_keys: dict[str, Scalar] = {}
        self.header_systems = False
        self.external_services: set[str] = set()
        self.collections: dict[str, list[str]] = {}
        # Prompts checked in this check by their item's text (see `_checked_prompt`), and whether the check
        # of the current one read the file's lines (then it is not kept: its fixes may depend on the text
        # around the item)
        self.same_items: dict[object, tuple[Span, Prompt | None, list[Finding]] | None] = {}
        self.same_hits: int | None = 0  # items moved from a kept check so far; None: checks kept at second sight
        self.same_checked = 0  # items checked whose check could be kept
        self.lines_read = False
        self.second_dash: dict[int, int] = {}  # line → where its second "- " starts (_unwrap_paths_fix)
        # what the reference's prompt normalization reads from the header (reference_form.py)
        self.ref_header: dict[str, Any] = reference_header(None)
        self.keep_prompts = True  # False: the prompts are dropped once checked (check_weval)
        self.note: Callable[[], Any] | None = None  # check_weval's `note`

    @property
    def lines(self) -> list[str]:
        """The file's lines, for fixes that edit the text around a node."""
        self.lines_read = True
        return self.parsed.lines

    # --- structure ------------------------------------------------------------------------------

    def run(self) -> WevalResult:
        docs = [d for d in self.parsed.documents if not is_null(d.root)]
        bp_id = blueprint_id(self.path)
        if not docs:
            if not self.parsed.findings:
                self.out.error("empty-blueprint", Span(0, 0, 0, 0),
                               "YAML blueprint is empty or contains only null documents.")
            return WevalResult(None, self.out)
        header: Mapping | None = None
        # (item, document index) of every prompt; a generator, so a streamed parse's items are parsed as
        # they are checked here and dropped after (ParsedFile.streamed: none is kept in prompt_nodes)
        prompt_items: Iterable[tuple[Node, int]] = ()
        first = docs[0].root
        is_json = self.path is not None and self.path.suffix == ".json"
        if len(docs) == 1:
            if isinstance(first, Sequence):
                prompt_items = ((p, 0) for p in first.items)
            elif isinstance(first, Mapping) and isinstance(first.get("prompts"), Sequence):
                header = first
                prompt_items = ((p, 0) for p in first.get("prompts").items)  # type: ignore[union-attr]
            elif isinstance(first, Mapping) and not is_json and self._looks_like_prompt(first, PROMPT_MARKERS[:-1]):
                prompt_items = ((first, 0),)
            elif isinstance(first, Mapping):
                header = first
            else:
                self.out.error("invalid-structure", first.span,  # type: ignore[union-attr]
                               "A blueprint must be a mapping (header or prompt) or a list of prompts; "
                               f"found {node_type_name(first)}.")
                return WevalResult(None, self.out)
        else:
            if isinstance(first, Mapping) and not self._looks_like_prompt(first, PROMPT_MARKERS):
                header = first
                rest = docs[1:]
            else:
                rest = docs
            prompt_items = _items_of(rest)
        if header is not None:
            if has_merge_key(header):
                header = merged_mapping(header)
            self._mixed_header(header)
        start = len(self.out)
        bp = self._header(header, bp_id)
        self._reference_header(header, start, bp)
        # where each id was first used, then (once a second one comes) the message and Related every later
        # duplicate-prompt-id finding shares (not the node: a streamed check keeps none)
        seen_ids: dict[str, Span | tuple[str, tuple[Related]]] = {}
        prompt_nodes: list[Mapping] = []
        header_text = self._prompt_context(header)
        keep_nodes = not self.parsed.streamed
        # A streamed check (check, run) keeps a big file's prompts on disk, not as objects (prompt_store.py),
        # in a scratch file the source makes (no file is made or read but through the source)
        collected: list[Prompt] | PromptCollector = (
            PromptCollector() if self.parsed.streamed else bp.prompts)
        if not self.keep_prompts:
            collected = []
            keep_nodes = False
        any_item = False
        notes = self.note() if self.note is not None else None
        cache, out, checked = self.cache, self.out, self._checked_prompt
        shared = self._shared(docs, first, header, bp) if cache is None else None
        others: Any = None
        if shared is not None:  # the items in several processes: this one reads the first range, as below
            prompt_items, others = shared
        with others if shared is not None else contextlib.nullcontext():  # (killed and reaped however it ends)
            for node, doc_index in prompt_items:
                any_item = True
                if cache is None:
                    prompt = checked(node, doc_index, bp)
                else:
                    item_text = self.parsed.item_texts.get(id(node))
                    hit = cache.lookup(item_text, node, header_text, doc_index) if item_text is not None else None
                    if hit is not None:
                        prompt, found = hit
                        out.extend(found)
                    else:
                        mark = len(out)
                        prompt = checked(node, doc_index, bp)
                        if item_text is not None:
                            cache.store(item_text, node, header_text, prompt, out[mark:])
                if prompt is None:
                    continue
                if keep_nodes:
                    prompt_nodes.append(node)  # type: ignore[arg-type]
                if prompt.id in seen_ids:
                    self._again(seen_ids, prompt.id, prompt.id_span or first_line_span(node))
                else:
                    seen_ids[prompt.id] = prompt.id_span or first_line_span(node)
                if self.keep_prompts:
                    collected.append(prompt)
                    if notes is not None:
                        notes.add(prompt)
            if shared is not None:
                any_item = self._others(others, seen_ids, collected, notes) or any_item
        if isinstance(collected, PromptCollector):
            bp.prompts = collected.result()  # type: ignore[assignment]  # reads as the list it stands for
        if notes is not None:
            notes.of = bp.prompts
        if header is None and not any_item:
            self.out.warning("no-prompts", docs[0].span, "This blueprint has no prompts.")
        if self.cache is not None:
            self.cache.rotate()
        return WevalResult(bp, self.out, prompt_nodes, header, self.collections, self.models_dir, notes)

    processes: int | None = 1  # check_weval's `processes`
    _shared_items: LazyItems

    def _shared(self, docs: list[Any], first: Node | None, header: Mapping | None,
                bp: Blueprint) -> tuple[Iterator[tuple[Node, int]], Shared] | None:
        """A streamed list of prompts read in several processes (item_processes.py): this process's items
        and the others' reads; None when it is read here alone."""
        items = None
        if len(docs) == 1 and isinstance(first, Sequence):
            items, doc_index = first.items, 0
        elif len(docs) == 1 and header is not None and header is first and isinstance(header.get("prompts"), Sequence):
            items, doc_index = header.get("prompts").items, 0  # type: ignore[union-attr]
        elif len(docs) == 2 and header is first and isinstance(docs[1].root, Sequence):
            items, doc_index = docs[1].root.items, docs[1].index
        if not isinstance(items, LazyItems):
            return None
        parts = item_processes.parts(self.processes, items.count())
        if parts <= 1:
            return None
        self._shared_items = items
        ranges = items.ranges(parts)
        lazy, keep, out, checked, note = items, self.keep_prompts, self.out, self._checked_prompt, self.note

        def work(start: int, end: int) -> Iterator[Any]:
            """A range's prompts as (their findings, id, where the id is, record), each after the shapes its
            record names that this process made (new shapes, their first number); then what `note` noted."""
            notes = note() if note is not None and keep else None
            for node in lazy.part(start, end):
                mark = len(out)
                prompt = checked(node, doc_index, bp)
                found = out[mark:]
                del out[mark:]
                if prompt is None:
                    yield found, None, None, None
                    continue
                record = encode(prompt) if keep else None
                if len(names) > known[0]:  # the record names a shape made here: it goes first
                    yield shapes_since(known[0]), known[0]
                    known[0] = len(names)
                yield found, prompt.id, prompt.id_span or first_line_span(node), record
                if notes is not None:
                    notes.add(prompt)
            yield notes

        names = shape_names()
        known = [len(names)]
        others = item_processes.shared(ranges[1:], work)
        first_range = ((node, doc_index) for node in lazy.part(*ranges[0]))
        return first_range, others

    def _others(self, others: Shared, seen_ids: dict[str, Any], collected: Any, notes: Any) -> bool:
        """The other processes' prompts taken in as this process's loop takes its own (`run`); True when
        there was any. Raises Unshared when one of them could not read its range."""
        out, keep, any_item = self.out, self.keep_prompts, False
        for result in others.results():
            if type(result) is not tuple:  # a range's end: what it noted
                if notes is not None:
                    notes.extend(result)
                continue
            if len(result) == 2:  # shapes its records name, made there
                adopt_shapes(result[1], result[0])
                continue
            any_item = True
            found, pid, where, record = result
            if found:
                out.extend(found)
            if pid is None:
                continue
            if pid in seen_ids:
                self._again(seen_ids, pid, where)
            else:
                seen_ids[pid] = where
            if keep:
                collected.append_encoded(record, pid)
        self._shared_items.read_all()  # every item read, none said anything: nothing left to report
        return any_item

    def _again(self, seen_ids: dict[str, Any], pid: str, where: Span) -> None:
        """A prompt id used before: a duplicate-prompt-id error, whose message and Related every later
        duplicate of the id shares (where it was first used: not the node, a streamed check keeps none)."""
        used = seen_ids[pid]
        if type(used) is Span:
            used = seen_ids[pid] = (f"Duplicate prompt id '{pid}'.", (Related(used, f"'{pid}' first used here"),))
        message, related = used
        self.out.append(Finding("duplicate-prompt-id", Severity.ERROR, message, where, (), related, (), None, {}))

    def _reference_header(self, header: Mapping | None, start: int, bp: Blueprint) -> None:
        """The header as Weval's parser and loader read it: what the prompts' normalization takes from it
        (defs, render_as, noCache), the results' `config`, and what it refuses that no finding of ours reports."""
        problem = None
        try:
            raw = js_plain(header) if header is not None else {}
            self.ref_header = reference_header(raw)
            bp.reference = persisted(reference_config(raw, bp.id))
        except ReferenceRejects as exc:
            problem = str(exc)
        except (ValueError, RecursionError):  # too large to convert
            return
        if problem and header is not None and not any(f.severity is Severity.ERROR for f in self.out[start:]):
            self.out.error("reference-rejects", first_line_span(header), f"Weval refuses this blueprint: {problem}")

    def _prompt_context(self, header: Mapping | None) -> str:
        """What checking a prompt depends on in the header, as text: the prompt cache's key."""
        if header is None:
            return ""
        keys = ("point_defs", "defs", "externalServices", "systems", "system", "render_as", "noCache")
        return repr([(k, to_python(header.get(k))) for k in keys if header.has(k)]) + str(self.models_dir)

    @staticmethod
    def _looks_like_prompt(m: Mapping, markers: tuple[str, ...]) -> bool:
        """The reference's test: one of its markers with a truthy value (a single document's markers are
        prompt, messages, should, ideal, points; a stream's first document's also expect)."""
        return any(js_truthy(_plain(m.get(k))) for k in markers if m.has(k))

    def _mixed_header(self, header: Mapping) -> None:
        """A header that also carries prompt keys the reference ignores in detection."""
        for key, value in header.items():
            if key.value in ("promptText", "should_not", "expects", "expectations", "idealResponse") and truthy(value):
                self.out.warning("mixed-header-prompt", key.span,
                                 f"This document is read as the header, so '{key.value}' is ignored; "
                                 "move it into a prompt.")

    # --- header ---------------------------------------------------------------------------------

    def _header(self, header: Mapping | None, bp_id: str) -> Blueprint:
        bp = Blueprint.build(id=bp_id, path=str(self.path) if self.path else None, title=bp_id)
        problem = blueprint_id_problem(bp_id)
        if problem and self.path is not None:
            self.out.error("invalid-blueprint-id", Span(0, 0, 0, 0), problem)
        if header is None:
            bp.models_resolved = self._resolve_models(bp, None)
            return bp
        handled = {"id", "models", "system", "systems", "references", "point_defs", "prompts", "toolUse",
                   "externalServices", "evaluationConfig"}
        entries = check_object(header, HEADER, self.out, REGISTRY, handled=handled)
        if entries is None:
            return bp
        key = entries.key("id")
        if key is not None:
            value = entries.get("id")
            self.out.warning("ignored-blueprint-id", key.span,
                             f"'{key.value}' is ignored: the blueprint id always comes from the file path "
                             f"(here '{bp_id}'). Remove it.", tags=(Tag.DEPRECATED, Tag.UNNECESSARY),
                             fix=Fix(f"Remove '{key.value}'", (Edit(entry_span(key, value, self.lines), ""),)))
        simple = {"title": "title", "description": "description", "render_as": "render_as",
                  "temperature": "temperature", "concurrency": "concurrency", "embeddingModel": "embedding_model",
                  "noCache": "no_cache"}
        for name, attr in simple.items():
            v = entries.get(name)
            if isinstance(v, Scalar) and v.value is not None:
                setattr(bp, attr, v.value)
        bp.set_keys = frozenset(str(k.value) for k, _ in header.items())
        tags = entries.get("tags")
        if isinstance(tags, Sequence):
            # as the reference's loader normalizes them (`Mental Health` → `mental-health`)
            bp.tags = normalize_tags([t.value for t in tags.items if is_str(t)])
        tools = entries.get("tools")
        if isinstance(tools, Sequence):
            bp.tools = [t for t in to_python(tools) if isinstance(t, dict)]
        temps = entries.get("temperatures")
        if isinstance(temps, Sequence):
            bp.temperatures = [t.value for t in temps.items if is_number(t)]
        author = entries.get("author")
        if author is not None:
            bp.author = to_python(author)
        self._references(entries.get("references"), bp)
        self._system(entries.get("system"), entries.get("systems"), entries.key("system"), bp)
        self._point_defs(entries.get("point_defs"), bp)
        self._evaluation_config(entries.get("evaluationConfig"), bp)
        self._tools(entries.get("toolUse"), bp)
        services = entries.get("externalServices")
        if isinstance(services, Mapping):
            self.external_services = set(services.keys())
            bp.external_services = to_python(services)
            self._external_services(services)
        elif services is not None:
            check_value(services, HEADER.field("externalServices"), self.out)
        bp.models_resolved = self._resolve_models(bp, entries.get("models"))
        return bp

    def _external_services(self, services: Mapping) -> None:
        """Each service is `{url, method?, headers?, timeout_ms?, …}`: the reference POSTs to `url`, so an
        entry without one fails every `$call` point that names it, at run time."""
        for key, value in services.items():
            if not isinstance(value, Mapping):
                self.out.error("invalid-service", value.span if not is_null(value) else key.span,
                               f"External service '{key.value}' must be a mapping with a 'url' "
                               f"({{url, method, headers, timeout_ms}}); found {node_type_name(value)}.")
                continue
            url = value.get("url")
            if url is None:
                self.out.error("missing-service-url", key.span,
                               f"External service '{key.value}' has no 'url': every $call point naming it fails. "
                               "Add url: https://…")
            elif not isinstance(url, Scalar) or not isinstance(url.value, str) or not url.value.strip():
                self.out.error("missing-service-url", url.span,
                               f"External service '{key.value}': 'url' must be the service's address (text); "
                               f"found {node_type_name(url)}.")

    def _references(self, node: Node | None, bp: Blueprint) -> None:
        if node is None:
            return
        items = node.items if isinstance(node, Sequence) else [node]
        for item in items:
            if is_str(item):
                bp.references.append({"title": item.value})
            elif isinstance(item, Mapping):
                title = item.get("title") or item.get("name")
                if not is_str(title):
                    self.out.error("invalid-reference", first_line_span(item),
                                   "A reference needs a 'title' (or 'name'), and may have a 'url'.")
                    continue
                ref = {"title": title.value}
                url = item.get("url")
                if is_str(url):
                    ref["url"] = url.value
                bp.references.append(ref)
            else:
                self.out.error("invalid-reference", item.span,
                               f"A reference must be a string or {{title, url}}; found {node_type_name(item)}.")

    def _system(self, system: Node | None, systems: Node | None, system_key: Scalar | None, bp: Blueprint) -> None:
        if isinstance(system, Sequence):
            # The reference turns a header `system` list into `systems`.
            systems, system = system, None
        elif system is not None and not (is_str(system) or is_null(system)):
            self.out.error("wrong-type", system.span,
                           f"'system' must be a string (or a list of system prompts); found {node_type_name(system)}.")
        if is_str(system):
            bp.system = system.value
        if systems is None:
            return
        if not isinstance(systems, Sequence):
            self.out.error("wrong-type", systems.span,
                           f"'systems' must be a list of strings or null; found {node_type_name(systems)}.")
            return
        nulls = [s for s in systems.items if is_null(s)]
        for s in systems.items:
            if not (is_str(s) or is_null(s)):
                self.out.error("wrong-type", s.span, f"Each of 'systems' must be a string or null; found {node_type_name(s)}.")
        for extra in nulls[1:]:
            self.out.error("systems-null", extra.span, "'systems' may contain at most one null (no system prompt).",
                           related=(Related(nulls[0].span, "first null here"),))
        bp.systems = [s.value if isinstance(s, Scalar) else None for s in systems.items]
        self.header_systems = True

    def _point_defs(self, node: Node | None, bp: Blueprint) -> None:
        if node is None:
            return
        if not isinstance(node, Mapping):
            self.out.error("wrong-type", node.span, f"'point_defs' must be a mapping of names to points; found {node_type_name(node)}.")
            return
        for key, value in node.items():
            name = str(key.value)
            self.point_defs[name] = value
            self.point_def_keys[name] = key
            if is_str(value):
                bp.point_defs[name] = value.value
            elif isinstance(value, Mapping):
                bp.point_defs[name] = to_python(value)
                self._point(value, "point_defs", None, False, in_path=False)  # validate the definition itself
            else:
                self.out.error("invalid-point-def", value.span,
                               f"A point definition is JavaScript (a string) or a point mapping; found {node_type_name(value)}.")

    def _evaluation_config(self, node: Node | None, bp: Blueprint) -> None:
        if node is None:
            return
        entries = check_object(node, REGISTRY["evaluationConfig"], self.out, REGISTRY)
        if entries is None:
            return
        cov = entries.get("llm-coverage")
        if isinstance(cov, Mapping):
            judges = cov.get("judges")
            if isinstance(judges, Sequence):
                for j in judges.items:
                    if isinstance(j, Mapping) and is_str(j.get("model")):
                        approach = j.get("approach")
                        jid = j.get("id")
                        bp.judges.append(Judge.build(id=jid.value if is_str(jid) else None, model=j.get("model").value,  # type: ignore[union-attr]
                            approach=approach.value if is_str(approach) else "standard"))
                        self._model_id(j.get("model"), None)  # type: ignore[arg-type]
            jm = cov.get("judgeModels")
            if isinstance(jm, Sequence):
                bp.judge_models = [m.value for m in jm.items if is_str(m)]

    def _tools(self, tool_use: Node | None, bp: Blueprint) -> None:
        if tool_use is None:
            return
        entries = check_object(tool_use, REGISTRY["toolUse"], self.out, REGISTRY, handled={"mode"})
        if entries is None:
            return
        mode = entries.get("mode")
        if isinstance(mode, Scalar) and mode.value != "trace-only":
            self.out.error("invalid-tool-mode", mode.span,
                           f"toolUse.mode '{mode.value}' is not supported; the only supported mode is 'trace-only'.",
                           fix=replace("Change to 'trace-only'", mode.span, "trace-only"))
        bp.tool_use = to_python(tool_use)

    # --- models ---------------------------------------------------------------------------------

    def _resolve_models(self, bp: Blueprint, node: Node | None) -> list[str]:
        collections = self.collections = load_collections(self.models_dir, self.source)
        resolved: list[str] = []
        if node is None:
            resolved_ids = collections.get("CORE", ["CORE"]) if collections else ["CORE"]
            return list(dict.fromkeys(resolved_ids))
        if not isinstance(node, Sequence):
            self.out.error("wrong-type", node.span, f"'models' must be a list; found {node_type_name(node)}.")
            return []
        # where each model was first listed, then (once listed again) the message and Related its
        # duplicate-model findings share
        seen: dict[str, Span | tuple[str, tuple[Related]]] = {}
        for item in node.items:
            ref = self._model_item(item, collections)
            if ref is None:
                continue
            bp.models.append(ref)
            if ref.collection:
                resolved += collections.get(ref.collection, [ref.id])
            else:
                resolved.append(ref.id)
            used = seen.get(ref.id)
            if used is None:
                seen[ref.id] = item.span
            else:
                if type(used) is Span:
                    used = seen[ref.id] = (f"Model '{ref.id}' is listed twice; it runs once.",
                                           (Related(used, "first listed here"),))
                message, related = used  # type: ignore[misc]
                self.out.append(Finding("duplicate-model", Severity.WARNING, message, item.span, (), related,
                                        _UNNECESSARY))
        return list(dict.fromkeys(resolved))

    def _model_item(self, item: Node, collections: dict[str, list[str]]) -> ModelRef | None:
        if is_str(item):
            parsed = self._model_id(item, collections)
            if parsed is None:
                return None
            return _model_ref(parsed.normalized, item.span, parsed.collection)
        if isinstance(item, Mapping):
            if item.has("id") or item.has("url"):
                check_object(item, REGISTRY["customModel"], self.out, REGISTRY)
                mid = item.get("id")
                if is_str(mid):
                    return ModelRef.build(id=mid.value, span=item.span, collection=None,
                                                    custom=to_python(item))
                return None
            pairs = list(item.items())
            if len(pairs) == 1 and is_str(pairs[0][1]):
                # Weval's run-config would read it as provider:model, but its parser refuses it first
                key, value = pairs[0][0], pairs[0][1]
                assert isinstance(value, Scalar)
                written = f"{key.value}:{value.value}"
                self.out.error("invalid-model", first_line_span(item),
                               f"Weval refuses {{{key.value}: {value.value}}}: a model object needs an 'id' (a custom "
                               f"model). Write '{written}'.",
                               fix=replace(f"Write '{written}'", item.span, quote(written)))
                return ModelRef.build(id=written, span=item.span, collection=None, custom=None)
            self.out.error("invalid-model", first_line_span(item),
                           "A model is 'provider:model', or a custom model {id, url, modelName, inherit}.")
            return None
        self.out.error("invalid-model", item.span, f"A model id must be a string; found {node_type_name(item)}.")
        return None

    def _model_id(self, node: Scalar, collections: dict[str, list[str]] | None) -> Any:
        parsed = parse_model_id(str(node.value))
        if parsed.problem:
            self.out.error("invalid-model-id", node.span, parsed.problem)
            return None
        if parsed.trimmed:
            self.out.warning("model-id-whitespace", node.span,
                             f"Spaces around ':' in '{node.value}' are trimmed; write '{parsed.normalized}'.",
                             fix=replace(f"Write '{parsed.normalized}'", node.span, quote(parsed.normalized, node.style)))
        invalid = getattr(collections, "invalid", {})
        if parsed.collection and parsed.collection in invalid:
            self.out.warning("unresolved-collection", node.span,
                             f"Model collection '{parsed.collection}' cannot be resolved: models/{parsed.collection}.json "
                             f"is {invalid[parsed.collection]}. Weval expects a JSON array of model id strings and "
                             "refuses it; so does `evalspec run`.")
        elif parsed.collection and collections:
            if parsed.collection not in collections:
                best = closest(parsed.collection, collections)
                msg = f"Unknown model collection '{parsed.collection}'"
                msg += f"; did you mean '{best}'?" if best else f". Known: {', '.join(sorted(collections))}."
                self.out.warning("unknown-collection", node.span, msg,
                                 fixes=(replace(f"Change to '{best}'", node.span, best),) if best else ())
        elif parsed.collection and collections is not None:
            # No collections folder at all: the same refusal `evalspec run` gives, on the value.
            self.out.warning("unresolved-collection", node.span,
                             f"Model collection '{parsed.collection}' cannot be resolved: no "
                             f"models/{parsed.collection}.json was found walking up from the blueprint inside its project "
                             "(its repository, or the folder holding blueprints/), nor in --models-dir. "
                             "`evalspec run` refuses it; list provider:model ids, or run with -m.")
        elif parsed.provider and parsed.provider not in KNOWN_PROVIDERS and parsed.provider not in ("echo", "replay"):
            best = closest(parsed.provider, KNOWN_PROVIDERS, cutoff=0.6)
            if best:
                fixed = f"{best}:{parsed.name}"
                self.out.warning("unknown-provider", node.span,
                                 f"Unknown provider '{parsed.provider}'; did you mean '{best}'?",
                                 fix=replace(f"Change to '{fixed}'", node.span, quote(fixed, node.style)))
            else:
                self.out.info("unknown-provider", node.span,
                              f"Provider '{parsed.provider}' is not one evalspec can call "
                              f"({_KNOWN_PROVIDERS_TEXT}); use a custom model object for other endpoints.")
        return parsed

    # --- prompts --------------------------------------------------------------------------------

    # Items of up to this many characters are looked up by their text (longer ones are fewer than
    # 4 MB / SAME_ITEM_TEXT in a file, so checking each costs what their parse does), and the last
    # SAME_ITEMS distinct texts are kept (a streamed check of 100,000 prompts keeps no more)
    SAME_ITEM_TEXT = 256
    SAME_ITEMS = 256
    # Checks of items kept at their first sight until this many were checked with no repeat among them;
    # from then on, at their second
    FIRST_SIGHTS_KEPT = 4096

    def _checked_prompt(self, node: Node, doc_index: int, bp: Blueprint) -> Prompt | None:
        """`_prompt(node)`, or for an item whose text was checked before in this file, that check's prompt and
        findings moved to the item's place: what checking it again would give. A 4 MB flow list holds 1.4
        million `{}`: each took ~12 µs to check, most of the analysis, and a copy takes a fraction.

        Only an item whose check depends on nothing but its text (and the header, the same for every
        item) is kept: no alias (`*a` may name another node each time), no block scalar (its value may
        take in blank lines past its span), no read of the file's lines (a fix may edit around the item),
        and every place in the result within the item's span."""
        span = node.span
        sl, sc, el, ec = span
        if el - sl > 8:
            return self._prompt(node, doc_index, bp)
        lines = self.parsed.lines
        if sl == el:
            text = lines[sl][sc:ec]
            key: object = text
        else:
            joined = lines.span_text(sl, sc, el, ec) if type(lines) is Lines else None
            text = joined if joined is not None else \
                "\n".join([lines[sl][sc:], *[lines[i] for i in range(sl + 1, el)], lines[el][:ec]])
            key = (sc, text)  # the continuation lines' indentation is read against the item's column
        hit = self.same_items.get(key)  # (only texts that pass the test below are kept)
        if hit is not None:
            if self.same_hits is not None:
                self.same_hits += 1
            first, prompt, found = hit
            line, dl, dc = first[0], sl - first[0], sc - first[1]
            if len(found) == 1:  # (most often: a million `{}` each miss a prompt)
                self.out.append(moved_finding(found[0], line, dl, dc))
            elif found:
                self.out.extend([moved_finding(f, line, dl, dc) for f in found])
            return _moved_prompt(prompt, doc_index, line, dl, dc) if prompt is not None else None
        if len(text) > self.SAME_ITEM_TEXT or "*" in text or "|" in text or ">" in text:
            return self._prompt(node, doc_index, bp)
        same = self.same_items
        if self.same_hits is None and key not in same:
            # A file whose first items repeat none: a text's check is kept from its second sight, the text
            # alone at its first (keeping the check of every one of 20,000 distinct prompts, each then
            # dropped unused, was ~5 % of checking them)
            if self.SAME_ITEMS > 0:
                if len(same) >= self.SAME_ITEMS:
                    del same[next(iter(same))]  # the oldest
                same[key] = None
            return self._prompt(node, doc_index, bp)
        mark = len(self.out)
        self.lines_read = False
        prompt = self._prompt(node, doc_index, bp)
        found = self.out[mark:]
        if not self.lines_read and self.SAME_ITEMS > 0 and _all_within(span, prompt, found):
            if key not in same and len(same) >= self.SAME_ITEMS:
                del same[next(iter(same))]  # the oldest
            same[key] = (span, prompt, found)
        if self.same_hits is not None:
            self.same_checked += 1
            if self.same_checked >= self.FIRST_SIGHTS_KEPT and not self.same_hits:
                self.same_hits = None
        return prompt

    def _prompt(self, node: Node, doc_index: int, bp: Blueprint) -> Prompt | None:
        if has_merge_key(node):
            node = merged_mapping(node)  # type: ignore[arg-type]  # js-yaml's `<<: *a`: its keys, own keys first
        start = len(self.out)
        if not isinstance(node, Mapping):
            if not is_null(node):
                self.out.error("invalid-prompt", node.span,
                               f"A prompt must be a mapping with 'prompt' or 'messages'; found {node_type_name(node)}.")
            return None
        entries = check_object(node, PROMPT, self.out, REGISTRY, handled=_PROMPT_HANDLED)
        assert entries is not None
        # each field's value by name: a dict's own get, not Entries.get (called ~15 times a prompt)
        get = {name: pair[1] for name, pair in entries.found.items()}.get
        id_node = get("id")
        explicit_id = None
        if isinstance(id_node, Scalar) and js_truthy(id_node.value):
            explicit_id = js_prompt_id(id_node.value)  # String(id): 1e3 → "1000"; 0, false and "" are no id
        elif id_node is not None and not isinstance(id_node, Scalar):
            self.out.error("wrong-type", id_node.span, "A prompt 'id' must be a string.")
        label = explicit_id or "(no id)"
        prompt_node, messages_node = get("prompt"), get("messages")
        messages: list[Message] = []
        if messages_node is not None and prompt_node is not None:
            key = entries.key("prompt")
            self.out.error("prompt-and-messages", key.span,  # type: ignore[union-attr]
                           f"'{key.value}' cannot be combined with 'messages'; the reference silently uses "  # type: ignore[union-attr]
                           "'messages'. Keep one of them.",
                           fix=Fix(f"Remove '{key.value}'", (Edit(entry_span(key, prompt_node, self.lines), ""),)))  # type: ignore[union-attr,arg-type]
        if messages_node is not None:
            messages = self._messages(messages_node)
        elif prompt_node is not None:
            if is_str(prompt_node) and prompt_node.value.strip():
                messages = [_message(prompt_node.span, "user", prompt_node.value)]
            else:
                self.out.error("empty-prompt", prompt_node.span, "'prompt' must be non-empty text.")
        else:
            self.out.error("missing-prompt", first_line_span(node), "A prompt needs 'prompt' or 'messages'.")
        system = get("system")
        system_set = "system" in entries
        if isinstance(system, Sequence):
            self.out.error("prompt-system-list", system.span,
                           "Per-prompt 'system' must be a string or null, not an array. Did you mean to use 'systems' "
                           "in the blueprint header?")
        elif system is not None and not (is_str(system) or is_null(system)):
            self.out.error("wrong-type", system.span, f"'system' must be a string or null; found {node_type_name(system)}.")
        if system_set and self.header_systems:
            key = entries.key("system")
            self.out.error("system-with-systems", key.span,  # type: ignore[union-attr]
                           f"When the blueprint header defines 'systems', individual prompts (like '{label}') cannot "
                           "have their own 'system' override.")
        # the reference's `should || points || expect || expects || expectations`: the first that is truthy
        should_node = _first_truthy_rubric(node, get("should"))
        should_not_node = get("should_not")
        should = self._rubric(should_node, label, inverted=False) if should_node is not None else []
        should_not = self._rubric(should_not_node, label, inverted=True) if should_not_node is not None else []
        # the optional fields, converted only when present (most prompts set a few: a 4 MB file has a million)
        ideal, citation, description = get("ideal"), get("citation"), get("description")
        weight, render_as, temperature = get("weight"), get("render_as"), get("temperature")
        no_cache, tags = get("noCache"), get("tags")
        # Prompt.build(…) with every field given, without its keywords: its fields in the order build leaves
        # them (the declared defaults' first, then the others as given)
        p = _new_object(Prompt)
        p.__dict__ = {
            "id_generated": explicit_id is None,
            "id_span": id_node.span if explicit_id and id_node is not None else None,
            "ideal": _str(ideal) if ideal is not None else None,
            "system": _str(system) if system is not None else None, "system_set": system_set,
            "citation": _citation(citation) if citation is not None else None,
            "description": _str(description) if description is not None else None,
            "weight": _num(weight, 1.0) if weight is not None else 1.0,
            "render_as": (_str(render_as) if render_as is not None else None) or bp.render_as,
            "temperature": _num(temperature, None) if temperature is not None else None,
            "no_cache": _bool(no_cache, bp.no_cache or None) if no_cache is not None else bp.no_cache or None,
            "document": doc_index, "reference": None, "id": explicit_id or "", "span": node.span, "messages": messages,
            "tags": [str(t.value) for t in tags.items if isinstance(t, Scalar)] if isinstance(tags, Sequence) else [],
            "should": should, "should_not": should_not}
        plain = plain_reference(node, self.ref_header)
        if plain is not None:  # the steps below, without walking the prompt's values again (plain_prompt.py)
            plain_ref, plain_read = plain
            p.id = js_prompt_id(plain_ref["id"])
            if self.keep_prompts:
                p.should = _as_read(p.should, plain_read, node)
                p.should_not = _as_read(p.should_not, [], node) if p.should_not else p.should_not
                p.reference = persisted_plain(plain_ref)  # (persisted(plain_ref), from what a plain one can hold)
            return p
        try:
            ref = weval_prompt(js_plain(node), self.ref_header)
            try:
                validate_prompt(ref)
            except ReferenceRejects as exc:
                self._refused(start, node, exc)
        except ReferenceRejects as exc:
            ref = None
            self._refused(start, node, exc)
        except (ValueError, RecursionError):  # too large to convert: the typed model's own form
            ref = None
        if ref is not None:
            p.id = js_prompt_id(ref["id"])
            try:  # what is scored: the points as Weval's evaluator reads the parser's (their spans ours)
                should_read = evaluator_points(ref.get("points"), ref["id"], False)
                should_not_read = evaluator_points(ref.get("should_not"), ref["id"], True)
            except ReferenceRejects as exc:
                self._refused(start, node, exc, "Weval's evaluator stops on this prompt, no answer gets a score")
            else:
                if self.keep_prompts:
                    p.should = _as_read(p.should, should_read, node)
                    p.should_not = _as_read(p.should_not, should_not_read, node)
            if self.keep_prompts:
                p.reference = persisted(ref)
        elif explicit_id is None:
            p.id = _hash_id(reference_prompt_json(p))
        return p

    def _refused(self, start: int, node: Node, exc: ReferenceRejects, what: str = "Weval refuses this prompt") -> None:
        """Weval's parser, loader or evaluator refuses the prompt where no finding of ours says why: its message."""
        if not any(f.severity is Severity.ERROR for f in self.out[start:]):
            self.out.error("reference-rejects", first_line_span(node), f"{what}: {exc}")

    def _messages(self, node: Node) -> list[Message]:
        if not isinstance(node, Sequence):
            self.out.error("wrong-type", node.span, f"'messages' must be a list; found {node_type_name(node)}.")
            return []
        out: list[Message] = []
        for i, item in enumerate(node.items):
            msg = self._message(item, i)
            if msg is not None:
                out.append(msg)
        if not node.items:
            self.out.error("empty-messages", node.span, "'messages' must have at least one message.")
        if len(out) != len(node.items) or not out:
            return out  # order rules on a partial list would only echo the message already reported
        if out[0].role == "assistant":
            self.out.error("message-order", out[0].span, "The first message may not be from the assistant.")
        if out[-1].role != "user":
            self.out.error("message-order", out[-1].span,
                           f"Last message role in the input sequence must be 'user'. Found '{out[-1].role}'.")
        previous: Message | None = None
        for m in out:
            if m.role == "system":
                continue
            if previous is not None and previous.role == m.role:
                self.out.error("message-order", m.span,
                               f"Two '{m.role}' messages in a row; turns must alternate between user and assistant.")
            previous = m
        return out

    def _message(self, item: Node, index: int) -> Message | None:
        if not isinstance(item, Mapping):
            self.out.error("invalid-message", item.span,
                           f"A message is {{role, content}} or {{user: …}}; found {node_type_name(item)}.")
            return None
        if item.has("role") or item.has("content"):
            entries = check_object(item, MESSAGE, self.out, REGISTRY, handled={"content"})
            role_node, content = entries.get("role"), entries.get("content")  # type: ignore[union-attr]
            if role_node is None:
                self.out.error("missing-field", first_line_span(item), "A message needs a 'role'.")
                return None
            role = str(role_node.value) if isinstance(role_node, Scalar) else ""
        else:
            pairs = list(item.items())
            if len(pairs) != 1:
                self.out.error("invalid-message", first_line_span(item),
                               "Each message in the shorthand format must have exactly one key (e.g., 'user', "
                               f"'assistant', 'ai', 'system'). Invalid message at index {index}.")
                return None
            key, content = pairs[0]
            role = str(key.value)
            if role not in ("user", "assistant", "system", "ai"):
                best = closest(role, ("user", "assistant", "system", "ai"), cutoff=0.5)
                self.out.error("invalid-role", key.span,
                               f"Invalid role '{role}' in message at index {index}"
                               + (f"; did you mean '{best}'?" if best else "; use user, assistant, ai or system."),
                               fixes=(replace(f"Change to '{best}'", key.span, best),) if best else ())
                return None
        if role not in ("user", "assistant", "system", "ai"):
            return None
        role = "assistant" if role == "ai" else role
        if is_null(content):
            if role != "assistant":
                self.out.error("empty-message", (content or item).span,
                               f"A '{role}' message needs content; only 'assistant: null' (a turn the model "
                               "generates) may be empty.")
            return _message(item.span, role, None)
        if not is_str(content):
            self.out.error("wrong-type", content.span,  # type: ignore[union-attr]
                           f"Message content must be text; found {node_type_name(content)}.")
            return None
        if not content.value.strip():
            self.out.error("empty-message", content.span, "Message content may not be empty.")
        return _message(item.span, role, content.value)

    # --- rubric points --------------------------------------------------------------------------

    def _rubric(self, node: Node | None, prompt_label: str, *, inverted: bool) -> list[Point]:
        if node is None or is_null(node):
            return []
        if not isinstance(node, Sequence):
            self.out.error("wrong-type", node.span,
                           f"A rubric must be a list of points; found {node_type_name(node)}.")
            return []
        points: list[Point] = []
        position = -1  # the item's place in the reference's normalized list: its paths' pathId
        paths: list[Sequence] = []
        for item in node.items:
            if not (isinstance(item, Sequence) and not any(not _dropped_member(m) for m in item.items)):
                position += 1  # (a path with no member left is dropped by the reference, and not counted)
            if isinstance(item, Sequence):
                if item.items and isinstance(item.items[0], Sequence):
                    self.out.error(
                        "nested-paths", item.span,
                        "Nested arrays within nested arrays are not supported: each alternative path is its own "
                        "item of the rubric. Write every path as `- - point` directly under the rubric key, "
                        "not as a list of paths.", fix=self._unwrap_paths_fix(item))
                    continue
                members = [m for m in item.items if not _dropped_member(m)]
                if not members:
                    continue
                path_id = f"path_{position}"  # as the reference numbers paths: should and should_not alike
                paths.append(item)
                for m in members:
                    if is_str(m) and m.value == "":
                        self._empty_point(m)
                        continue
                    if type(m) is Scalar and type(m.value) is str and not m.value.startswith("$"):
                        points.append(_text_point(m.span, path_id, inverted, m.value))  # `_point`'s first case
                        continue
                    if isinstance(m, Sequence):
                        self.out.error("nested-path-array", m.span,
                                       "Nested arrays within alternative paths are not supported: a path is a flat "
                                       "list of points.")
                        continue
                    p = self._point(m, prompt_label, path_id, inverted, in_path=True)
                    if p is not None:
                        points.append(p)
                continue
            if type(item) is Scalar and type(item.value) is str and (item.value[:1] != "$" or item.value == "$"):
                if not item.value:
                    self._empty_point(item)
                    continue
                points.append(_text_point(item.span, None, inverted, item.value))  # `_point`'s first case
                continue
            p = self._point(item, prompt_label, None, inverted, in_path=False)
            if p is not None:
                points.append(p)
        if len(paths) == 1:
            self.out.info("single-path", paths[0].span,
                          "An alternative path with no alternatives: its points count together as one half of the "
                          "score. Add another path, or write the points directly under the rubric key.")
        return points

    def _empty_point(self, node: Node) -> None:
        self.out.error("empty-point", node.span,
                       "An empty point: Weval keeps it, and its evaluator then stops on it, so no model's answer "
                       "to this prompt gets a score. Remove it or write the criterion.")

    def _unwrap_paths_fix(self, item: Sequence) -> Fix | None:
        """`- - - a` (a list of paths) → one `- - a` item per path, same indentation as the item."""
        lines = self.lines
        line = lines[item.span.start_line]
        # The item must be the first thing on its line after `- `: the last "- " before it is the line's
        # first non-space (found once per line: a search back from each of 100,000 items of one flow line
        # was quadratic).
        dash = _SPACES.match(line).end()  # type: ignore[union-attr]
        if not line.startswith("- ", dash) or dash + 2 > item.span.start_col:
            return None
        after = self.second_dash.get(item.span.start_line)
        if after is None:
            after = self.second_dash[item.span.start_line] = line.find("- ", dash + 1)
        if after >= 0 and after + 2 <= item.span.start_col:
            return None
        indent = " " * dash
        texts = []
        for path in item.items:
            if not isinstance(path, Sequence):
                return None
            texts.append(indent + "- " + flow(to_python(path)))
        span = Span(item.span.start_line, 0, item.span.end_line, len(lines[item.span.end_line]))
        return Fix("Write each alternative path as its own item", (Edit(span, "\n".join(texts)),))

    def _point(self, node: Node, prompt_label: str, path_id: str | None, inverted: bool, *,
               in_path: bool) -> Point | None:
        if type(node) is Scalar and type(node.value) is str and (node.value[:1] != "$" or node.value == "$"):
            # the common point, plain text: built without the closure and keywords (a 4 MB rubric is a
            # million of them)
            return _text_point(node.span, path_id, inverted, node.value)

        def make(**kw: Any) -> Point:
            return _new_point(node.span, path_id, inverted, kw)

        if isinstance(node, Scalar):
            if not isinstance(node.value, str):
                self.out.error("invalid-point", node.span,
                               f"Point must be a string, array, or object; found {node_type_name(node)}.")
                return None
            text = node.value
            if text.startswith("$") and len(text) > 1:  # "$" alone is text to the reference
                m = _QUOTED_FN.match(text)
                if m and not in_path:
                    self._quoted_function(node, m.group(1), m.group(2))
                    # As the reference reads it: a function literally named after the
                    # whole string, which fails at run time and is left out of the score.
                    return make(kind="fn", fn=text[1:], fn_written=text[1:])
                if m:
                    self._quoted_function(node, m.group(1), m.group(2), in_path=True)
                    return make(kind="text", text=text)
                if in_path:
                    self.out.warning("dollar-text-in-path", node.span,
                                     f"'{text}' inside an alternative path is judged as text, not run as a function. "
                                     f"Write it as a mapping: {text}: <argument>.")
                    return make(kind="text", text=text)
                fn = resolve_function(text)
                if fn is None:
                    self._unknown_function(node.span, text[1:])
                    return make(kind="fn", fn=text[1:], fn_written=text[1:])  # scored as Weval does: an error
                if fn.arg not in (Arg.NONE, Arg.OPTIONAL_STRING):
                    # The reference runs it with an undefined argument: the point errors at run time and
                    # is silently left out of the score. Here it is an error on the point.
                    self.out.error("missing-argument", node.span,
                                   f"'{text}' has no argument, so the reference runs {text} without one: the point "
                                   f"errors and is left out of the score. Give it an argument ({fn.arg.value}), "
                                   f"e.g. {fn.example}.")
                return make(kind="fn", fn=fn.name, fn_written=text[1:])
            return make(kind="text", text=text)
        if not isinstance(node, Mapping):
            self.out.error("invalid-point", node.span, f"Point must be a string, array, or object; found {node_type_name(node)}.")
            return None
        keys = [(k, v) for k, v in node.pairs if isinstance(k, Scalar)]  # node.items(), as a list
        fn_pair = None
        for k, v in keys:  # the first `$` key (a loop: a generator per point cost more than its test)
            if isinstance(k.value, str) and k.value.startswith("$"):
                fn_pair = (k, v)
                break
        if fn_pair is not None:
            return self._dollar_point(node, fn_pair, keys, prompt_label, make, path_id, inverted)
        if any(node.has(k) for k in ("text", "point", "fn")):
            entries = check_object(node, POINT, self.out, REGISTRY, handled={"fn", "fnArgs", "weight"})
            assert entries is not None
            text_node, fn_node = entries.get("text"), entries.get("fn")
            if text_node is not None and fn_node is not None:
                self.out.error("text-and-fn", entries.key("fn").span,  # type: ignore[union-attr]
                               "Point cannot have both 'text' and 'fn' defined.")
                return None
            weight = self._weight(entries.get("weight"))
            citation = _point_citation(entries.get("citation"))
            if fn_node is not None:
                if not is_str(fn_node):
                    self.out.error("wrong-type", fn_node.span, "'fn' must be a function name.")
                    return None
                name = fn_node.value
                if name.startswith("$"):
                    self.out.warning("fn-dollar", fn_node.span,
                                     f"'fn: {name}' keeps the '$', so the reference looks for a function named '{name}' "
                                     f"and fails; write 'fn: {name[1:]}'.",
                                     fix=replace(f"Write '{name[1:]}'", fn_node.span, quote(name[1:], fn_node.style)))
                    # the reference keeps the '$': no function has that name, the point fails
                    return make(kind="fn", fn=name, fn_written=name, fn_args=to_python(entries.get("fnArgs")),
                                weight=weight, citation=citation)
                fn = resolve_function(name)
                if fn is None:
                    self._unknown_function(fn_node.span, name)
                    return make(kind="fn", fn=name, fn_written=name, fn_args=to_python(entries.get("fnArgs")),
                                weight=weight, citation=citation)  # scored as Weval does: an error
                arg_node = entries.get("fnArgs")
                check_function_arg(fn, arg_node, fn_node, self.out, self)
                return make(kind="fn", fn=fn.name, fn_written=name, fn_args=to_python(arg_node) if arg_node else None,
                            weight=weight, citation=citation)
            if not is_str(text_node) or not text_node.value.strip():
                self.out.error("invalid-point", (text_node or node).span, "A point's 'text' must be non-empty text.")
                return None
            return make(kind="text", text=text_node.value, weight=weight, citation=citation)
        if len(keys) == 1 and is_str(keys[0][1]):
            return make(kind="text", text=str(keys[0][0].value), citation=keys[0][1].value)
        if len(keys) == 1 and isinstance(keys[0][1], Mapping | Sequence):
            key = keys[0][0]
            fn = resolve_function(str(key.value))
            best = f"${fn.name if fn.name == key.value else key.value}" if fn else None
            if best is None:
                suggestion = suggest_function(str(key.value))
                best = f"${suggestion}" if suggestion else None
            if best:
                self.out.error("missing-dollar", key.span,
                               f"'{key.value}' is read as point text with a citation, but its value is not text. "
                               f"Did you mean the function '{best}'?",
                               fix=replace(f"Write '{best}'", key.span, best))
                return None
        self.out.error("invalid-point", first_line_span(node),
                       "Point must define 'text', a function ('fn' or '$...'), or a 'Point: Citation' pair.")
        return None

    def _dollar_point(self, node: Mapping, fn_pair: tuple[Scalar, Node], keys: list[tuple[Scalar, Node]],
                      prompt_label: str, make: Any, path_id: str | None, inverted: bool) -> Point | None:
        key, arg = fn_pair
        weight_node: Node | None = None
        multiplier_node: Node | None = None
        citation: Any = None
        for k, v in keys:
            if k is key:
                continue
            name = str(k.value)
            if name == "weight":
                weight_node = v
            elif name == "multiplier":
                multiplier_node = v
            elif name == "citation":
                citation = _point_citation(v)
            elif name.startswith("$"):
                self.out.error("two-functions", k.span,
                               f"A point runs one function; '{name}' is ignored because '{key.value}' comes first. "
                               "Make it its own list item.")
            else:
                best = closest(name, ("weight", "multiplier", "citation"))
                self.out.warning("unknown-key", k.span,
                                 f"Unknown key '{name}' in a function point" + (f"; did you mean '{best}'?" if best else
                                                                                "; known: weight, citation."),
                                 fixes=(replace(f"Rename '{name}' to '{best}'", k.span, best),) if best else ())
        # `weight ?? multiplier`, as the reference reads them
        weight = self._weight(weight_node if weight_node is not None and not is_null(weight_node) else multiplier_node)
        name = str(key.value)[1:]
        if name == "ref":
            return self._ref_point(key, arg, prompt_label, make, weight, citation)
        fn = resolve_function(name)
        if fn is None:
            self._unknown_function(key.span, name)
            return make(kind="fn", fn=name, fn_written=name, fn_args=to_python(arg), weight=weight,
                        citation=citation)  # scored as Weval does: an error
        check_function_arg(fn, arg, key, self.out, self)
        return _new_point(node.span, path_id, inverted, {  # make(…), without its keywords
            "kind": "fn", "fn": fn.name, "fn_written": name,
            "fn_args": arg.value if type(arg) is Scalar else to_python(arg), "weight": weight, "citation": citation})

    def _ref_point(self, key: Scalar, arg: Node, prompt_label: str, make: Any, weight: float,
                   citation: Any) -> Point | None:
        if not is_str(arg):
            self.out.error("wrong-type", arg.span, "'$ref' takes the name of a point_defs entry.")
            return None
        name = arg.value
        definition = self.point_defs.get(name)
        if definition is None:
            best = closest(name, self.point_defs)
            self.out.error("undefined-ref", arg.span,
                           f"Undefined definition '{name}' referenced in prompt '{prompt_label}'."
                           + (f" Did you mean '{best}'?" if best else ""),
                           fixes=(replace(f"Change to '{best}'", arg.span, quote(best, arg.style)),) if best else ())
            return None
        if is_str(definition):
            # the reference: {fn: js, fnArgs: definition, multiplier: the $ref's weight, citation: the $ref's}
            return make(kind="fn", fn="js", fn_written="js", fn_args=definition.value, weight=weight, citation=citation)
        value = _plain(definition)
        if isinstance(value, dict):
            return self._copied_point(key, value, make)
        return None

    def _copied_point(self, key: Scalar, value: dict[str, Any], make: Any) -> Point | None:
        """A `$ref` to a mapping: the reference copies the definition as written, and its evaluator reads
        `text`, `fn`, `fnArgs`, `arg`, `multiplier`, `citation` and the first `$` key of the copy, the
        name not rewritten (so `weight` there, and a weight or citation beside `$ref`, count for nothing)."""
        where = f"the point_defs entry '$ref' names ({key.span.start_line + 1}:{key.span.start_col + 1})"
        standard = ("text", "fn", "fnArgs", "arg", "multiplier", "citation")
        dollar = next((k for k in js_keys(value) if k not in standard and k.startswith("$")), None)
        text, fn = value.get("text"), value.get("fn")
        multiplier = value.get("multiplier")
        if multiplier is not None and (not isinstance(multiplier, (int, float)) or isinstance(multiplier, bool)
                                       or not 0.1 <= multiplier <= 10):
            self.out.error("point-weight", key.span, f"Point multiplier must be a number between 0.1 and 10. Found "
                           f"{multiplier}: {where} (Weval's evaluator stops on it).")
            return None
        weight = float(multiplier) if multiplier is not None else 1.0
        cited = value.get("citation")
        citation = cited if isinstance(cited, str) else None
        if js_truthy(text) and (js_truthy(fn) or dollar):
            self.out.error("text-and-fn", key.span, f"Point object cannot have both 'text' and a function: {where}.")
            return None
        if js_truthy(text):
            return make(kind="text", text=text if isinstance(text, str) else str(text), weight=weight, citation=citation)
        fn_name = fn if js_truthy(fn) else (dollar[1:] if dollar else None)
        if not isinstance(fn_name, str) or not fn_name:
            self.out.error("invalid-point", key.span,
                           f"Point object must have 'text', 'fn', or a function name (starting with $): {where}. "
                           "Weval's evaluator stops on it ('point' is not read in a $ref copy).")
            return None
        args = value.get("fnArgs")
        if args is None:
            args = value.get("arg")
        if args is None and dollar is not None and not js_truthy(fn):
            args = value.get(dollar)
        found = resolve_function(fn_name, rewrite=False)
        if found is None:
            self.out.error("unknown-function", key.span,
                           f"Unknown point function '{fn_name}' in {where}: a point copied by $ref keeps its name "
                           "as written, and Weval has no function of that name.")
            return None
        return make(kind="fn", fn=found.name, fn_written=fn_name, fn_args=args, weight=weight, citation=citation)

    def _weight(self, node: Node | None) -> float:
        if node is None:
            return 1.0
        if not is_number(node) or not (0.1 <= node.value <= 10):
            found = node.raw if isinstance(node, Scalar) else node_type_name(node)
            self.out.error("point-weight", node.span, f"Point multiplier must be a number between 0.1 and 10. Found {found}.")
            return 1.0
        return float(node.value)

    def _unknown_function(self, span: Span, name: str) -> None:
        best = suggest_function(name)
        msg = f"Unknown point function '${name}'"
        if best:
            self.out.error("unknown-function", span, f"{msg}; did you mean '${best}'?",
                           fix=replace(f"Change to '${best}'", span, _respell(span, self.lines, name, best)))
        else:
            self.out.error("unknown-function", span, msg + ".")

    def _quoted_function(self, node: Scalar, name: str, arg_text: str, *, in_path: bool = False) -> None:
        fn = resolve_function(name)
        what = f"the function '${name}'" if fn else f"'${name}' (not a known function either)"
        if in_path:
            # Inside an alternative path the reference keeps `$` strings as text.
            message = (f"Inside an alternative path this quoted string is judged by an LLM as text, in the "
                       f"reference and in evalspec alike; it does not run {what}. Remove the quotes to make it "
                       "a function point.")
        else:
            message = (f"The reference reads this quoted string as a function literally named "
                       f"\"{node.value[1:]}\", which does not exist, so the point fails and is left out of the "
                       f"score; evalspec does the same. Remove the quotes to run {what}.")
        fixes: tuple[Fix, ...] = ()
        arg_value, verbatim = _parse_arg_text(arg_text)
        if fn is not None and arg_value is not None:
            # Keep the author's inner text ('False') when it is valid YAML as it stands.
            arg = arg_text.strip() if verbatim else flow(arg_value)
            fixes = (replace("Convert to a function point", node.span, f"${name}: {arg}"),)
        self.out.warning("quoted-function", node.span, message, fixes=fixes)


def suggest_function(name: str) -> str | None:
    """The canonical function a misspelt name most likely means (an alias match names its canonical),
    or the one a name from another tool stands for (`$regex` -> `$matches`)."""
    foreign = foreign_name(name)
    if foreign is not None:
        return foreign
    best = closest(name, POINT_FUNCTIONS)
    if best is None:
        alias = closest(name, [a for f in POINT_FUNCTIONS.values() for a in f.aliases])
        fn = resolve_function(alias) if alias else None
        best = fn.name if fn else None
    return best


def _respell(span: Span, lines: list[str], old: str, new: str) -> str:
    """The replacement text for a function name at `span`, keeping a `$` the source has."""
    text = lines[span.start_line][span.start_col:span.end_col] if span.start_line == span.end_line else ""
    return text.replace(old, new, 1) if old in text else f"${new}"


def _parse_arg_text(text: str) -> tuple[Any, bool]:
    """The argument of a quoted pseudo-function (`$icontains: 'False'` → "False"), and whether the
    text is valid YAML as written (so a fix can keep it verbatim)."""
    text = text.strip()
    if not text:
        return None, False
    parsed = parse_yaml(f"v: {text}\n")
    if not parsed.findings and parsed.documents and isinstance(parsed.documents[0].root, Mapping):
        node = parsed.documents[0].root.get("v")
        value = to_python(node)
        if value is not None:
            # A plain scalar is only kept when every YAML version reads it as the same string.
            plain_ok = not isinstance(node, Scalar) or node.style is not None or quote(str(value)) == str(value)
            return value, plain_ok
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1], False
    return text, False


def reference_prompt(p: Prompt) -> dict[str, Any]:
    """The prompt as the reference normalizes it, the input of its id hash."""
    return {
        "messages": [{"role": m.role, "content": m.content} for m in p.messages],
        "idealResponse": p.ideal if p.ideal is not None else UNDEFINED,
        "system": p.system if p.system_set else UNDEFINED,
        "citation": p.citation if p.citation is not None else UNDEFINED,
        "description": p.description if p.description is not None else UNDEFINED,
        "points": reference_points(p.should) if p.should else UNDEFINED,
        "should_not": reference_points(p.should_not) if p.should_not else UNDEFINED,
        "weight": p.weight if p.weight != 1.0 else UNDEFINED,
        "temperature": p.temperature if p.temperature is not None else UNDEFINED,
        "noCache": p.no_cache if p.no_cache is not None else UNDEFINED,
        "render_as": p.render_as,
    }


_UNNECESSARY = (Tag.UNNECESSARY,)
_KNOWN_PROVIDERS_TEXT = ", ".join(KNOWN_PROVIDERS)  # in every unknown-provider note (a million model ids)

# A Point's fields before the ones each point sets
_POINT_BASE = {"text": None, "fn": None, "fn_written": None, "fn_args": None, "weight": 1.0, "citation": None}


_TEXT_POINT: dict[str, Any] = {**_POINT_BASE, "kind": "text"}  # (the same fields in the same order as _new_point's)


def _model_ref(model_id: str, span: Span, collection: str | None) -> ModelRef:
    """`ModelRef.build(id=…, span=…, collection=…, custom=None)` (its fields in the same order), without the
    keywords: a flow list of a million model ids."""
    ref = _new_object(ModelRef)
    ref.__dict__ = {"collection": collection, "custom": None, "id": model_id, "span": span}
    return ref


def _message(span: Span, role: str, content: str | None) -> Message:
    """Message.build(role=…, content=…, span=…), without its keywords (its fields in that order)."""
    m: Message = _new_object(Message)
    m.__dict__ = {"role": role, "content": content, "span": span}
    return m


def _text_point(span: Span, path_id: str | None, inverted: bool, text: str) -> Point:
    """`_new_point(span, path_id, inverted, {"kind": "text", "text": text})`: a copy of one dict."""
    fields = _TEXT_POINT.copy()
    fields["text"], fields["path_id"], fields["inverted"], fields["span"] = text, path_id, inverted, span
    point = _new_object(Point)
    point.__dict__ = fields
    return point


def _new_point(span: Span, path_id: str | None, inverted: bool, fields: dict[str, Any]) -> Point:
    """`Point.build(**_POINT_BASE, path_id=…, inverted=…, span=…, **fields)`, without its keywords."""
    point = _new_object(Point)
    d = point.__dict__
    d.update(_POINT_BASE)
    d.update(fields)
    d["path_id"], d["inverted"], d["span"] = path_id, inverted, span
    return point


def _moved_prompt(p: Prompt, document: int, line: int, dl: int, dc: int) -> Prompt:
    """A checked prompt moved to another item of the same text (see `source.moved_span`): a copy of its fields
    with the moved ones replaced; an empty list is shared, as `tags` is (a prompt is never changed once
    checked). Not through `evolve`'s keywords: a 4 MB flow list of `{}` moves 1.4 million prompts."""
    fields = p.__dict__.copy()
    fields["span"] = moved_span(p.span, line, dl, dc)
    fields["document"] = document
    if p.id_span is not None:
        fields["id_span"] = moved_span(p.id_span, line, dl, dc)
    if p.messages:
        fields["messages"] = [m.evolve(span=moved_span(m.span, line, dl, dc)) for m in p.messages]
    if p.should:
        fields["should"] = [pt.evolve(span=moved_span(pt.span, line, dl, dc)) for pt in p.should]
    if p.should_not:
        fields["should_not"] = [pt.evolve(span=moved_span(pt.span, line, dl, dc)) for pt in p.should_not]
    moved = _new_object(Prompt)
    moved.__dict__ = fields
    return moved


def _all_within(item: Span, prompt: Prompt | None, found: list[Finding]) -> bool:
    """Does every place of a prompt's check lie within its item (what `_moved_prompt` can move)?"""
    if not findings_within(item, found):
        return False
    if prompt is None:
        return True
    spans: list[Span | None] = [prompt.span, prompt.id_span]
    if prompt.messages:
        spans += [m.span for m in prompt.messages]
    if prompt.should:
        spans += [pt.span for pt in prompt.should]
    if prompt.should_not:
        spans += [pt.span for pt in prompt.should_not]
    return spans_within(item, spans)


_new_object = object.__new__


# A prompt's generated id by its JSON: prompts alike in all but their place (a file of a million `{}`, or
# of misspelt keys) hash the same text.
_hash_id = lru_cache(maxsize=256)(hash_id)


def reference_prompt_json(p: Prompt) -> str:
    """`stable_json` of `reference_prompt(p)`, the input of its id hash, written directly: the generic
    walk (a dict per prompt, message and point, sorted, then serialized) was most of the cost of checking
    a small prompt (a flow list of a million `{}` is a million hashes). Keys in sorted order."""
    parts = []
    if p.citation is not None:
        parts.append('"citation":' + stable_json(p.citation))
    if p.description is not None:
        parts.append('"description":' + stable_json(p.description))
    if p.ideal is not None:
        parts.append('"idealResponse":' + stable_json(p.ideal))
    parts.append('"messages":[' + ",".join([
        '{"content":' + (_quote(m.content) if type(m.content) is str else stable_json(m.content))
        + ',"role":' + stable_json(m.role) + "}" for m in p.messages]) + "]")
    if p.no_cache is not None:
        parts.append('"noCache":' + stable_json(p.no_cache))
    if p.should:
        parts.append('"points":' + _points_json(p.should))
    parts.append('"render_as":' + stable_json(p.render_as))
    if p.should_not:
        parts.append('"should_not":' + _points_json(p.should_not))
    if p.system_set:
        parts.append('"system":' + stable_json(p.system))
    if p.temperature is not None:
        parts.append('"temperature":' + stable_json(p.temperature))
    if p.weight != 1.0:
        parts.append('"weight":' + stable_json(p.weight))
    return "{" + ",".join(parts) + "}"


def _points_json(points: list[Point]) -> str:
    """`stable_json(reference_points(points))`: alternative paths regrouped into nested lists."""
    out = grouped_by_path(points, _point_json)
    return "[" + ",".join([x if type(x) is str else "[" + ",".join(x) + "]" for x in out]) + "]"


def _point_json(pt: Point) -> str:
    """`stable_json(pt.reference_form())`, keys sorted: citation, fn, fnArgs, multiplier, text."""
    w = pt.weight
    head = '{"citation":' + stable_json(pt.citation) + "," if pt.citation is not None else "{"
    multiplier = '"multiplier":' + ("1" if w == 1.0 and type(w) is float else stable_json(w))
    if pt.kind == "text":
        return head + multiplier + ',"text":' + stable_json(pt.text) + "}"
    fn = '"fn":' + _quote(reference_fn_name(pt.fn_written or pt.fn or ""))
    args = ',"fnArgs":' + stable_json(pt.fn_args) if pt.fn_args is not None else ""
    return head + fn + args + "," + multiplier + "}"


_RUBRIC_KEYS = ("should", "points", "expect", "expects", "expectations")


def _first_truthy_rubric(node: Mapping, default: Node | None) -> Node | None:
    """`next((v for k in _RUBRIC_KEYS if (v := node.get(k)) is not None and _node_truthy(v)), default)`,
    the pairs read once: each key's first value, as `Mapping.get` finds it."""
    first: dict[str, Node] = {}
    for k, v in node.pairs:
        if isinstance(k, Scalar) and isinstance(k.value, str) and k.value in _RUBRIC_KEY_SET and k.value not in first:
            first[k.value] = v
    if first:
        for key in _RUBRIC_KEYS:
            found = first.get(key)
            if found is not None and _node_truthy(found):
                return found
    return default


_RUBRIC_KEY_SET = frozenset(_RUBRIC_KEYS)


def _node_truthy(node: Node) -> bool:
    """JavaScript truthiness of the node's value (a list or mapping always is)."""
    return not isinstance(node, Scalar) or js_truthy(_plain(node))


def _as_read(points: list[Point], read: list[dict[str, Any]], node: Node) -> list[Point]:
    """The checker's points with what Weval's evaluator reads in them (function, argument, multiplier,
    citation, path), where they differ; where the checker dropped a point, the evaluator's list on the
    prompt's first line (the prompt has an error finding then)."""
    if len(points) != len(read):
        span = first_line_span(node)
        return [_new_point(span, r["path_id"], r["inverted"], _read_fields(r)) for r in read]
    out = points
    for i, (pt, r) in enumerate(zip(points, read, strict=True)):
        # `_read_fields(r)` compared with the point's, field by field, without making it when they are the same
        get = pt.__dict__.get
        if r["kind"] == "text":  # `_read_values(r)`, without its call, its function's name as last read
            kind, text, fn, written, args = "text", r["text"], None, None, None
        else:
            written = r["fn"]
            fn = _READ_FNS.get(written)
            if fn is None:
                fn = _read_fn(written)
            kind, text, args = "fn", None, r["args"]
        if get("kind") != kind or get("text") != text or get("fn") != fn or get("fn_written") != written \
                or get("fn_args") != args or get("weight") != r["weight"] or get("citation") != r["citation"] \
                or pt.path_id != r["path_id"]:
            if out is points:
                out = list(points)
            out[i] = pt.evolve(path_id=r["path_id"], **_read_fields(r))
    return out


def _read_fields(r: dict[str, Any]) -> dict[str, Any]:
    kind, text, fn, written, args = _read_values(r)
    return {"kind": kind, "text": text, "fn": fn, "fn_written": written, "fn_args": args,
            "weight": r["weight"], "citation": r["citation"]}


def _read_values(r: dict[str, Any]) -> tuple[str, Any, Any, Any, Any]:
    """(kind, text, fn, fn_written, fn_args) of a point as the reference's evaluator read it."""
    if r["kind"] == "text":
        return "text", r["text"], None, None, None
    return "fn", None, _read_fn(r["fn"]), r["fn"], r["args"]


# A function point's name as the evaluator read it → the function it runs (`_read_fn`), for the last names read
# (a file uses a few; emptied when full, so a file of a million made-up names keeps it bounded)
_READ_FNS: dict[str, str] = {}
_KEPT_FNS = 1024


def _read_fn(written: str) -> str:
    """The canonical name of the function the evaluator runs for `written` (not rewritten), else `written`."""
    found = resolve_function(written, rewrite=False)
    name = found.name if found else written
    if len(_READ_FNS) >= _KEPT_FNS:
        _READ_FNS.clear()
    _READ_FNS[written] = name
    return name


def _point_citation(node: Node | None) -> Any:
    """A point's citation as the reference passes it on: whatever value is written (null: none)."""
    return _plain(node)


def _plain(node: Node | None) -> Any:
    """`js_plain(node)`, or None where js-yaml cannot resolve a tag in it (`!!null ''`): the reference
    refuses the whole file at load, which the header's and each prompt's conversion report."""
    if node is None:
        return None
    try:
        return js_plain(node)
    except ReferenceRejects:
        return None


def _dropped_member(m: Node) -> bool:
    """A member of an alternative path the reference's parser drops: null, or an empty list."""
    return is_null(m) or (isinstance(m, Sequence) and not m.items)


def _str(node: Node | None) -> str | None:
    return node.value if is_str(node) else None


def _citation(node: Node | None) -> Any:
    """Text, or a {title, url} mapping kept as is (the reference passes it through)."""
    return to_python(node) if isinstance(node, Mapping) else _str(node)


def _num(node: Node | None, default: float | None) -> Any:
    return node.value if is_number(node) else default


def _bool(node: Node | None, default: bool | None) -> bool | None:
    return node.value if isinstance(node, Scalar) and isinstance(node.value, bool) else default
