"""The vendored Open Responses OpenAPI document, as JSON Schema validators (jsonschema + referencing).

``tests/support/openresponses/README.md`` says where the document comes from. Every schema is looked up by
its name in ``components/schemas``; nothing here restates a field of the specification.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

DOCUMENT_PATH = Path(__file__).resolve().parent / "openresponses" / "openapi.json"
DOCUMENT_URI = "urn:openresponses:openapi.json"
DOCUMENT = json.loads(DOCUMENT_PATH.read_text(encoding="utf-8"))
SCHEMAS = DOCUMENT["components"]["schemas"]
_REGISTRY = Registry().with_resource(DOCUMENT_URI, Resource.from_contents(DOCUMENT, default_specification=DRAFT202012))


@cache
def validator(schema_name: str) -> Draft202012Validator:
    if schema_name not in SCHEMAS:
        raise KeyError(f"no schema {schema_name!r} in the Open Responses document")
    return Draft202012Validator({"$ref": f"{DOCUMENT_URI}#/components/schemas/{schema_name}"}, registry=_REGISTRY)


def _event_schemas() -> dict[str, str]:
    """Event type -> the name of its schema, read from each event schema's ``type`` enum."""
    found = {}
    for name, schema in SCHEMAS.items():
        if name.endswith("StreamingEvent"):
            (kind,) = schema["properties"]["type"]["enum"]
            found[kind] = name
    return found


EVENT_SCHEMAS = _event_schemas()


def errors(schema_name: str, instance) -> list[str]:
    """Every way ``instance`` breaks the named schema, as 'path: message' lines (empty when valid)."""
    found = sorted(validator(schema_name).iter_errors(instance), key=lambda e: list(e.absolute_path))
    return [f"{'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}" for e in found]


def response_errors(response) -> list[str]:
    return errors("ResponseResource", response)


def event_errors(event) -> list[str]:
    """An event against the schema its ``type`` names; an event type the document lacks is an error."""
    kind = event.get("type") if isinstance(event, dict) else None
    if kind not in EVENT_SCHEMAS:
        return [f"(root): event type {kind!r} is not in the Open Responses document"]
    return errors(EVENT_SCHEMAS[kind], event)
