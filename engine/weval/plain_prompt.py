"""A plain prompt's reference form read straight from its nodes: what reference_form.py's steps give it.

`plain_reference(node, header)` is, for a prompt of the plainest shape, exactly what the checker otherwise
gets from `reference_prompt(js_plain(node), header)`, `validate_prompt` and `evaluator_points` (none of which
throws on such a prompt): `(ref, should_read)`, the same dicts with the same keys in the same order. For any
other prompt it is None and those steps run as before (tests/weval/test_plain_prompt.py compares both on
every prompt of the corpus and on mutations of them). `persisted_plain(ref)` is `reference_form.persisted(ref)`
for such a `ref`, made in place from what its shape allows.

The plainest shape: a mapping of `id` (optional), `prompt` and `should`, each once, nothing tagged; `id` and
`prompt` text as written (not a date or an underscored number to js-yaml), the prompt not blank to
JavaScript; `should` a non-empty list of text points (not starting with `$`) and one-key `$function:
argument` mappings (not `$ref`), the argument an untagged scalar or a list of untagged scalars.
"""

from __future__ import annotations

from typing import Any

from ..source import Mapping, Node, Scalar, Sequence
from .ids import UNDEFINED
from .js_values import JS_WHITESPACE_CHARS, js_or, js_plain, truthy
from .reference_form import normalize_fn, persisted, reference_hash_id

_KEYS = frozenset(("id", "prompt", "should"))
_NUMERIC_START = frozenset("0123456789+-")  # where js-yaml may read a plain text as a date or number


def _text(node: Node) -> str | None:
    """The node's text as js-yaml gives it, when it is an untagged scalar js-yaml reads as that text."""
    if type(node) is not Scalar or node.tag is not None:
        return None
    value = node.value
    if type(value) is not str or (node.style is None and value[:1] in _NUMERIC_START):
        return None
    return value


def _argument(node: Node) -> tuple[bool, Any]:
    """(True, js-yaml's value) for an untagged scalar or a list of untagged scalars, else (False, None)."""
    if type(node) is Scalar:
        return (True, js_plain(node)) if node.tag is None else (False, None)
    if type(node) is Sequence and node.tag is None:
        for item in node.items:
            if type(item) is not Scalar or item.tag is not None:
                return False, None
        return True, js_plain(node)
    return False, None


def plain_reference(node: Node, header: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
    """(the reference's normalized prompt, the evaluator's reading of its `should` points) for a plain prompt
    (see the module's docstring), else None. `header`: reference_form.reference_header's."""
    if type(node) is not Mapping or node.tag is not None:
        return None
    fields: dict[str, Node] = {}
    for k, v in node.pairs:
        if type(k) is not Scalar or k.value not in _KEYS or k.value in fields:
            return None
        fields[k.value] = v
    id_node, prompt_node, should = fields.get("id"), fields.get("prompt"), fields.get("should")
    if prompt_node is None or type(should) is not Sequence or should.tag is not None or not should.items:
        return None
    content = _text(prompt_node)
    if content is None or not content.strip(JS_WHITESPACE_CHARS):
        return None
    pid: Any = UNDEFINED
    if id_node is not None:
        pid = _text(id_node)
        if pid is None:
            return None
    points: list[dict[str, Any]] = []
    read: list[dict[str, Any]] = []
    for item in should.items:
        text = _text(item)
        if text is not None:
            if not text or text[0] == "$":
                return None
            points.append({"text": text, "multiplier": 1})
            read.append({"kind": "text", "text": text, "fn": None, "args": None, "weight": 1, "citation": None,
                         "path_id": None, "inverted": False})
            continue
        if type(item) is not Mapping or item.tag is not None or len(item.pairs) != 1:
            return None
        key, arg = item.pairs[0]
        name = key.value if type(key) is Scalar else None
        if type(name) is not str or name[:1] != "$" or len(name) < 2 or name == "$ref":
            return None
        ok, args = _argument(arg)
        if not ok:
            return None
        fn = normalize_fn(name[1:])
        points.append({"fn": fn, "fnArgs": args, "multiplier": 1, "citation": UNDEFINED})
        read.append({"kind": "fn", "text": None, "fn": fn, "args": args, "weight": 1, "citation": None,
                     "path_id": None, "inverted": False})
    out: dict[str, Any] = {"messages": [{"role": "user", "content": content}], "id": pid}
    if header["noCache"] is not UNDEFINED:
        out["noCache"] = truthy(header["noCache"])
    out["render_as"] = js_or(header["render_as"], "markdown")
    out["points"] = points
    if not truthy(pid):
        out["id"] = reference_hash_id(out)
    return out, read


def persisted_plain(ref: dict[str, Any]) -> dict[str, Any]:
    """`persisted(ref)` for a `ref` of `plain_reference` (which is changed into it, not copied): its keys,
    its messages' and its points' start with no digit (their order stays), its id and messages are text, its
    noCache a bool, its points' multipliers 1; only a function point's undefined citation goes, its argument
    and the header's render_as are made as `persisted` makes them unless they are text, an int, a bool or null
    (as they are but for a list of arguments)."""
    for point in ref["points"]:
        if "fn" in point:
            del point["citation"]  # (always undefined: a plain point has no citation)
            args = point["fnArgs"]
            kind = type(args)
            if not (kind is str or kind is int or kind is bool or args is None):
                if args is UNDEFINED:
                    del point["fnArgs"]
                else:
                    point["fnArgs"] = persisted(args)  # (a list is copied: it is also the evaluator's reading)
    render_as = ref["render_as"]
    if type(render_as) is not str:
        if render_as is UNDEFINED:
            del ref["render_as"]
        else:
            ref["render_as"] = persisted(render_as)
    return ref
