"""JSON Schemas for both formats, generated from the registry (`evalspec schema --write`).

Draft-07, because that is what yaml-language-server and SchemaStore handle best. A YAML tool checks
each document of a file on its own, so the Weval schema accepts any of the three document shapes: a
header (possibly with `prompts`), one prompt, or a list of prompts. The committed files are tested for
staleness against this generator.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .registry.fields import FieldSpec, ObjectSpec, Registry
from .registry.weval import REGISTRY as WEVAL
from .registry.weval_functions import POINT_FUNCTIONS, SHAPES

DRAFT = "http://json-schema.org/draft-07/schema#"
SCHEMA_DIR = Path(__file__).resolve().parent.parent / "schemas"
FILES = {"weval": "weval-blueprint.schema.json", "agentv": "agentv-eval.schema.json"}


def field_schema(f: FieldSpec, *, alias_of: str | None = None, deprecated: bool = False) -> dict[str, Any]:
    if f.schema is not None:
        out: dict[str, Any] = dict(f.schema)
    elif f.object and set(f.types) == {"object"}:
        out = {"$ref": f"#/$defs/{f.object}"}
    elif f.items_object and set(f.types) == {"array"}:
        out = {"type": "array", "items": {"$ref": f"#/$defs/{f.items_object}"}}
    else:
        types = list(f.types)
        out = {"type": types[0] if len(types) == 1 else types}
        if f.enum:
            out["enum"] = list(f.enum) + ([None] if "null" in types else [])
        if f.minimum is not None:
            out["minimum"] = f.minimum
        if f.maximum is not None:
            out["maximum"] = f.maximum
        if f.exclusive_minimum is not None:
            out["exclusiveMinimum"] = f.exclusive_minimum
        if f.items:
            out["items"] = {"type": f.items}
        elif f.items_object:
            out["items"] = {"$ref": f"#/$defs/{f.items_object}"}
        if f.object and "object" in types:
            out = {"anyOf": [{"$ref": f"#/$defs/{f.object}"}, {k: v for k, v in out.items() if k != "type"} |
                             {"type": [t for t in types if t != "object"]}]} if len(types) > 1 else out
    doc = f.doc
    if alias_of:
        doc = f"Alias of `{alias_of}`. {doc}"
    if deprecated or (f.deprecated and not alias_of):
        doc = f"Deprecated: {f.deprecated or f'use `{alias_of}`'}. {doc}" if not doc.startswith("Deprecated") else doc
        out["deprecated"] = True
    if f.default is not None:
        out["default"] = f.default
    if f.example:
        out["examples"] = [f.example]
    # $ref siblings are ignored by draft-07 tools, so wrap to keep the description visible.
    if "$ref" in out:
        out = {"allOf": [{"$ref": out.pop("$ref")}], **out}
    return {"description": doc, "markdownDescription": doc, **out}


def object_schema(spec: ObjectSpec, *, closed: bool = True) -> dict[str, Any]:
    props: dict[str, Any] = {}
    for f in spec.fields:
        props[f.name] = field_schema(f)
        for a in f.aliases:
            props[a] = field_schema(f, alias_of=f.name)
        for a in f.deprecated_aliases:
            props[a] = field_schema(f, alias_of=f.name, deprecated=True)
    out: dict[str, Any] = {"type": "object", "description": spec.doc, "properties": props}
    required = [f for f in spec.fields if f.required]
    plain = [f.name for f in required if len(f.all_names) == 1]
    if plain:
        out["required"] = plain
    # A required field may be spelt by any of its names (`tests` or the deprecated `eval_cases`).
    spelled = [{"anyOf": [{"required": [n]} for n in f.all_names]} for f in required if len(f.all_names) > 1]
    if spelled:
        out["allOf"] = spelled
    if closed and not spec.open:
        out["additionalProperties"] = False
    return out


def registry_defs(registry: Registry, *, closed: bool = True) -> dict[str, Any]:
    return {name: object_schema(spec, closed=closed) for name, spec in registry.objects.items()}


# --- Weval --------------------------------------------------------------------------------------------

def _function_point_schema() -> dict[str, Any]:
    props: dict[str, Any] = {}
    for fn in POINT_FUNCTIONS.values():
        doc = f"{'Graded' if fn.graded else 'Binary'} point function. {fn.doc} Argument: {fn.arg.value}. " \
              f"Example: `{fn.example}`"
        for name in (fn.name, *fn.aliases):
            text = doc if name == fn.name else f"Alias of `${fn.name}`. {doc}"
            props[f"${name}"] = {"description": text, "markdownDescription": text, **SHAPES[fn.arg].schema}
    props["$ref"] = {"type": "string", "description": "Use a named definition from the header's `point_defs`."}
    props["weight"] = {"type": "number", "minimum": 0.1, "maximum": 10, "description": "How much the point counts."}
    props["multiplier"] = {"type": "number", "minimum": 0.1, "maximum": 10, "description": "Alias of `weight`."}
    props["citation"] = {"type": "string", "description": "A source for the point."}
    return {"type": "object", "description": "A function point: `$name: argument`, with optional weight and citation.",
            "properties": props, "additionalProperties": False, "minProperties": 1}


def weval_schema() -> dict[str, Any]:
    defs = registry_defs(WEVAL)
    point_item = {"anyOf": [
        {"type": "string", "description": "A text point, judged by an LLM (or `$name` for a function with no argument)."},
        {"$ref": "#/$defs/functionPoint"},
        {"$ref": "#/$defs/point"},
        {"type": "object", "description": "A text point with its citation: `\"criterion\": \"source\"`.",
         "additionalProperties": {"type": "string"}, "minProperties": 1, "maxProperties": 1,
         "propertyNames": {"pattern": "^[^$]"}},
    ]}
    defs["functionPoint"] = _function_point_schema()
    defs["pointItem"] = point_item
    defs["rubric"] = {"type": "array", "description": "Rubric points; a nested list is an alternative path (OR).",
                      "items": {"anyOf": [{"$ref": "#/$defs/pointItem"},
                                          {"type": "array", "description": "An alternative path (OR).",
                                           "items": {"$ref": "#/$defs/pointItem"}}]}}
    defs["header"]["properties"]["prompts"] = {
        "type": "array", "items": {"$ref": "#/$defs/prompt"},
        "description": "The prompts, when the whole blueprint is one mapping (the JSON form)."}
    defs["messageItem"] = {"anyOf": [
        {"$ref": "#/$defs/message"},
        {"type": "object", "description": "Shorthand: `user: …`, `assistant: …` (or `ai`), `system: …`.",
         "properties": {r: {"type": ["string", "null"]} for r in ("user", "assistant", "ai", "system")},
         "additionalProperties": False, "minProperties": 1, "maxProperties": 1}]}
    defs["prompt"]["properties"]["messages"]["items"] = {"$ref": "#/$defs/messageItem"}
    return {
        "$schema": DRAFT,
        "$id": "https://evalspec.dev/schemas/weval-blueprint.schema.json",
        "title": "Weval blueprint",
        "description": "A Weval blueprint document: the header, one prompt, or a list of prompts "
                       "(documents are separated by ---).",
        "anyOf": [{"$ref": "#/$defs/header"}, {"$ref": "#/$defs/prompt"},
                  {"type": "array", "items": {"$ref": "#/$defs/prompt"}}],
        "$defs": defs,
    }


# --- AgentV -------------------------------------------------------------------------------------------

def agentv_schema() -> dict[str, Any]:
    from .registry.agentv import REGISTRY as AGENTV
    from .registry.agentv_assertions import ASSERTION_TYPES, COMMON_FIELDS

    defs = registry_defs(AGENTV)
    common = {f.name: field_schema(f) for f in COMMON_FIELDS}
    type_names: list[str] = []
    branches: list[dict[str, Any]] = []
    for name, at in ASSERTION_TYPES.items():
        spellings = sorted({name, name.replace("-", "_")})
        type_names += spellings
        props = {f.name: field_schema(f) for f in at.fields}
        for f in at.fields:
            for a in f.aliases:
                props[a] = field_schema(f, alias_of=f.name)
            for a in f.deprecated_aliases:
                props[a] = field_schema(f, alias_of=f.name, deprecated=True)
        required = [f.name for f in at.fields if f.required]
        then: dict[str, Any] = {"properties": props}
        if required:
            then["required"] = required
        branches.append({"if": {"properties": {"type": {"enum": spellings}}, "required": ["type"]}, "then": then})
    defs["assertion"] = {
        "type": "object",
        "description": "An assertion: `type` names what it checks; the other fields depend on the type.",
        "properties": {**common, "type": {
            "type": "string", "description": "The assertion type (kebab-case or snake_case).",
            "anyOf": [{"enum": type_names}, {"type": "string"}]}},
        "required": ["type"],
        "allOf": branches,
    }
    return {
        "$schema": DRAFT,
        "$id": "https://evalspec.dev/schemas/agentv-eval.schema.json",
        "title": "AgentV eval file",
        "description": "An AgentV eval file (eval spec v2, AgentV 2.19).",
        "$ref": "#/$defs/suite",
        "$defs": defs,
    }


def generate(kind: str) -> dict[str, Any]:
    return weval_schema() if kind == "weval" else agentv_schema()


def render(kind: str) -> str:
    return json.dumps(generate(kind), indent=2, ensure_ascii=False) + "\n"


def write_all(folder: Path = SCHEMA_DIR) -> list[Path]:
    written = []
    for kind, name in FILES.items():
        path = folder / name
        path.write_text(render(kind), encoding="utf-8")
        written.append(path)
    return written
