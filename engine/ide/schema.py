"""What may stand at a place in an eval file: the registry, walked along a key path.

A `Slot` says what the value at a path is: an object with fields (an `ObjectSpec`), a list of
something, a free-form map, or a scalar of some field. Completion and hover ask `child()` for one
step at a time, so they read the same declarations as the checker. Two objects are told apart by a
key rather than by their place: a Weval point (by its `$function` key) and an AgentV assertion (by
its `type:`), so `child()` takes the keys of the mapping it steps into.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..registry import agentv as av
from ..registry import weval as wv
from ..registry.agentv_assertions import ASSERTION_SPELLINGS, ASSERTION_TYPES, AssertionType
from ..registry.fields import F, FieldSpec, ObjectSpec
from ..registry.weval_functions import PointFunction, resolve_function

# Slot kinds.
OBJECT = "object"  # a mapping described by `spec`
LIST = "list"  # a sequence of `item`
MAP = "map"  # free-form names, each mapping to `item`
SCALAR = "scalar"  # a leaf value of `field`
POINT = "point"  # a Weval rubric point: a string, a `$function` mapping, or the full object form
MESSAGE = "message"  # a Weval message: {role, content} or the shorthand `user: …`
MODEL = "model"  # a Weval model: an id string, {provider: model}, or a custom model object
ASSERTION = "assertion"  # an AgentV assertion, whose fields depend on its `type:`
ANY = "any"  # unknown: nothing to offer

# What a scalar holds, beyond its field's enum and type: drives value completion and hover.
V_MODEL = "model"  # a provider:model id (or a collection name)
V_REF = "ref"  # a point_defs name
V_FUNCTION = "function-name"  # a point function without `$` (`fn:`)
V_FN_ARG = "fn-arg"  # the argument of a `$function`
V_ASSERTION_TYPE = "assertion-type"
V_FILE = "file"  # a path relative to the eval file
V_DIR = "dir"
V_ARGV = "argv"  # an item of a command line; a path when it looks like one
V_TESTS = "tests"  # AgentV `tests:` as a path, or `file://` items
V_TEXT = "text"
V_PROVIDER = "provider"  # an AgentV target's provider


@dataclass(frozen=True)
class Slot:
    kind: str
    spec: ObjectSpec | None = None
    field: FieldSpec | None = None  # the field whose value this is (lists and scalars keep it too)
    item: Slot | None = None  # LIST / MAP: what each item is
    value: str | None = None  # SCALAR: one of the V_* kinds, when it is more than its field says
    fn: PointFunction | None = None  # V_FN_ARG: the function
    assertion: AssertionType | None = None  # ASSERTION resolved by its type
    in_path: bool = False  # POINT inside an alternative path (a nested list may not go deeper)


UNKNOWN = Slot(ANY)
# The keys (and inline values) a step may need: for an index, the item's mapping; for a key, the mapping
# the key is in.
KeysOf = Callable[[], dict[str, str]]


def _no_keys() -> dict[str, str]:
    return {}


# --- Weval ------------------------------------------------------------------------------------------

W_POINT_FN_SPEC = ObjectSpec("point_fn", "a function point", "A `$function` point and its options.", (
    wv.POINT.field("weight"),
    wv.POINT.field("citation"),
))
W_MESSAGE_SHORTHAND = ("user", "assistant", "system", "ai")
W_SHORTHAND_FIELD = {r: F(r, f"Shorthand message: a `{r}` turn with this content"
                          + (" (`ai` = assistant)" if r == "ai" else "")
                          + ("; `null` marks a turn the model generates." if r in ("assistant", "ai") else "."),
                          "string", "null") for r in W_MESSAGE_SHORTHAND}
W_TEXT_FIELD = F("text", "Rubric text judged by an LLM; with a string value, the value is its citation.", "string")
_MODEL_FIELDS = {("judge", "model"), ("header", "embeddingModel")}
# A `references` item. The checker reads these keys by hand (check.py `_references`) rather than from
# an ObjectSpec; this spec only lets completion and hover offer them.
W_REFERENCE = ObjectSpec("reference", "a reference", "A source for the blueprint.", (
    F("title", "What the source is called (or `name`).", "string", aliases=("name",)),
    F("url", "A link to the source.", "string"),
))


def weval_root(section: str) -> Slot:
    if section == "header":
        return Slot(OBJECT, wv.HEADER)
    return Slot(OBJECT, wv.PROMPT)


def weval_prompt_list() -> Slot:
    return Slot(LIST, item=Slot(OBJECT, wv.PROMPT), field=wv.HEADER.field("prompts"))


def _weval_child(slot: Slot, label: str | int, keys: KeysOf) -> Slot:
    kind = slot.kind
    if kind in (LIST, MAP):
        return slot.item or UNKNOWN
    if kind == POINT:
        if isinstance(label, int):
            return Slot(POINT, wv.POINT, in_path=True) if not slot.in_path else UNKNOWN
        if label.startswith("$"):
            if label == "$ref":
                return Slot(SCALAR, field=_REF_FIELD, value=V_REF)
            fn = resolve_function(label)
            return Slot(SCALAR, field=_fn_field(label), value=V_FN_ARG, fn=fn)
        hit = wv.POINT.lookup(label)
        if hit is None:
            return Slot(SCALAR, field=W_TEXT_FIELD, value=V_TEXT)  # `text: citation`
        f = hit[0]
        return Slot(SCALAR, field=f, value=V_FUNCTION if f.name == "fn" else None)
    if kind == MESSAGE:
        if isinstance(label, str) and label in W_SHORTHAND_FIELD:
            return Slot(SCALAR, field=W_SHORTHAND_FIELD[label], value=V_TEXT)
        hit = wv.MESSAGE.lookup(label) if isinstance(label, str) else None
        return Slot(SCALAR, field=hit[0]) if hit else UNKNOWN
    if kind == MODEL:
        hit = wv.REGISTRY["customModel"].lookup(label) if isinstance(label, str) else None
        return Slot(SCALAR, field=hit[0]) if hit else Slot(SCALAR, field=_MODEL_ID_FIELD, value=V_MODEL)
    if kind != OBJECT or slot.spec is None or not isinstance(label, str):
        return UNKNOWN
    hit = slot.spec.lookup(label)
    if hit is None:
        return UNKNOWN
    f = hit[0]
    name = (slot.spec.name, f.name)
    if name in (("prompt", "should"), ("prompt", "should_not")):
        return Slot(LIST, field=f, item=Slot(POINT, wv.POINT))
    if name == ("prompt", "messages"):
        return Slot(LIST, field=f, item=Slot(MESSAGE, wv.MESSAGE))
    if name == ("header", "models"):
        return Slot(LIST, field=f, item=Slot(MODEL, wv.REGISTRY["customModel"], field=_MODEL_ID_FIELD,
                                             value=V_MODEL))
    if name == ("llmCoverage", "judgeModels"):
        return Slot(LIST, field=f, item=Slot(SCALAR, field=_MODEL_ID_FIELD, value=V_MODEL))
    if name == ("header", "point_defs"):
        return Slot(MAP, field=f, item=Slot(POINT, wv.POINT))
    if name == ("header", "prompts"):
        return weval_prompt_list()
    if name == ("header", "references"):
        return Slot(LIST, field=f, item=Slot(OBJECT, W_REFERENCE))
    if name in _MODEL_FIELDS:
        return Slot(SCALAR, field=f, value=V_MODEL)
    return _generic(f, wv.REGISTRY)


_REF_FIELD = F("$ref", "Use a named point from the header's `point_defs`.", "string")
_MODEL_ID_FIELD = F("model", "A model id `provider:model`, or an ALL-CAPS collection name.", "string")


def _fn_field(label: str) -> FieldSpec:
    fn = resolve_function(label)
    return F(label, fn.doc if fn else "A point function.", "string", "number", "boolean", "array", "object", "null")


# --- AgentV -----------------------------------------------------------------------------------------

def agentv_root() -> Slot:
    return Slot(OBJECT, av.REGISTRY["suite"])


def assertion_slot(type_name: str | None) -> Slot:
    if type_name and len(type_name) >= 2 and type_name[0] == type_name[-1] and type_name[0] in "\"'":
        type_name = type_name[1:-1]
    t = ASSERTION_TYPES.get(ASSERTION_SPELLINGS.get(type_name or "", "")) if type_name else None
    if t is None and type_name:
        t = ASSERTION_TYPES.get(type_name.strip().replace("_", "-"))
    if t is None:
        return Slot(ASSERTION, av.REGISTRY["assertion"])
    return Slot(ASSERTION, t.spec, assertion=t)


_ASSERT_LIST = Slot(LIST, item=Slot(ASSERTION, av.REGISTRY["assertion"]))
_ARGV = Slot(LIST, item=Slot(SCALAR, field=F("argv", "One word of the command line.", "string"), value=V_ARGV))


def _agentv_child(slot: Slot, label: str | int, keys: KeysOf) -> Slot:
    kind = slot.kind
    if kind == LIST:
        item = slot.item or UNKNOWN
        if item.kind == ASSERTION:
            return assertion_slot(keys().get("type"))  # the item's own `type:` picks its fields
        return item
    if kind == MAP:
        return slot.item or UNKNOWN
    if kind not in (OBJECT, ASSERTION) or slot.spec is None or not isinstance(label, str):
        return UNKNOWN
    hit = slot.spec.lookup(label)
    if hit is None:
        return UNKNOWN
    f = hit[0]
    owner = slot.assertion.name if slot.assertion is not None else slot.spec.name
    name = (owner, f.name)
    if f.name == "assert":
        return Slot(LIST, field=f, item=_ASSERT_LIST.item)
    if name == ("suite", "tests"):
        return Slot(LIST, field=f, item=Slot(OBJECT, av.REGISTRY["test"]), value=V_TESTS)
    if f.name in ("input", "input_messages") and owner in ("suite", "test"):
        return Slot(LIST, field=f, item=Slot(OBJECT, av.REGISTRY["message"]))
    if name == ("test", "expected_messages"):
        return Slot(LIST, field=f, item=Slot(OBJECT, av.REGISTRY["expected_message"]))
    if f.name == "content" and owner in ("message", "expected_message"):
        return Slot(LIST, field=f, item=Slot(OBJECT, av.REGISTRY["content_block"]))
    if name == ("content_block", "value") and keys().get("type") in ("file", "image"):
        return Slot(SCALAR, field=f, value=V_FILE)
    if f.name in ("command", "script") and owner in ("code-judge", "workspace_hook", "workspace_script",
                                                     "prompt_script"):
        return Slot(LIST, field=f, item=_ARGV.item, value=V_ARGV)
    if name == ("target", "provider"):
        return Slot(SCALAR, field=f, value=V_PROVIDER)
    if f.name == "type" and slot.kind == ASSERTION:
        return Slot(SCALAR, field=f, value=V_ASSERTION_TYPE)
    if f.name in ("metadata", "config", "minimums", "weights", "requires_env"):
        return Slot(MAP, field=f, item=UNKNOWN)
    return _generic(f, av.REGISTRY)


def _generic(f: FieldSpec, registry: object) -> Slot:
    """What a field's value is, from its declaration alone (no owner or field names): its object, the
    object of its items (`items_object`, or a `$ref` among the items of its hand-written schema, so any
    type's rubric criteria are completed as `type: rubrics`' are), a path (`file_ref`, `folder`)."""
    objects = registry.objects  # type: ignore[attr-defined]
    if f.folder:
        return Slot(SCALAR, field=f, value=V_DIR)
    if f.object and f.object in objects:
        return Slot(OBJECT, objects[f.object], field=f, value=V_FILE if f.file_ref else None)
    if f.items_object and f.items_object in objects:
        return Slot(LIST, field=f, item=Slot(OBJECT, objects[f.items_object]))
    declared = _item_object(f.schema)
    if declared in objects:
        return Slot(LIST, field=f, item=Slot(OBJECT, objects[declared]))
    if f.items:
        return Slot(LIST, field=f, item=Slot(SCALAR, field=f))
    if "array" in f.types and "string" not in f.types and "object" not in f.types:
        return Slot(LIST, field=f, item=Slot(SCALAR, field=f))
    return Slot(SCALAR, field=f, value=V_FILE if f.file_ref else None)


def _item_object(schema: dict | None) -> str | None:
    """The object a list's items may be, by a hand-written schema: `items: {$ref}`, or a `$ref` among
    `items.anyOf` (a string shorthand beside it), in the schema or in one of its `anyOf` branches."""
    if not schema:
        return None
    for branch in (schema, *schema.get("anyOf", ())):
        items = branch.get("items") if isinstance(branch, dict) else None
        if not isinstance(items, dict):
            continue
        for item in (items, *items.get("anyOf", ())):
            ref = item.get("$ref") if isinstance(item, dict) else None
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                return ref[len("#/$defs/"):]
    return None


def child(fmt: str, slot: Slot, label: str | int, keys: KeysOf = _no_keys) -> Slot:
    """The slot one step below `slot` (a key of a mapping, or an index of a list)."""
    if slot.kind == ANY:
        return UNKNOWN
    if fmt == "weval":
        return _weval_child(slot, label, keys)
    return _agentv_child(slot, label, keys)


# A string item of AgentV `tests:`: a `file://path` or `file://glob` of tests files.
TESTS_ITEM = Slot(SCALAR, field=F("file", "A `file://path` or `file://glob` of tests files.", "string"), value=V_TESTS)
