"""JSON schemas of the tools, as an agent's client reads them: generated from the argument and
answer models, with every ``$ref`` written out in place (some clients follow no references),
no generated ``title`` (noise in an agent's context), and each description on one line.
"""

from __future__ import annotations

from typing import Any, cast

from pydantic import BaseModel
from pydantic.json_schema import JsonSchemaMode


def json_schema(model: type[BaseModel], mode: JsonSchemaMode) -> dict[str, Any]:
    """``model``'s JSON schema for ``mode`` (``validation`` for arguments, ``serialization``
    for answers), references inlined."""
    schema = model.model_json_schema(mode=mode)
    definitions = schema.pop("$defs", {})

    def inline(node: Any, in_properties: bool = False) -> Any:
        if isinstance(node, list):
            return [inline(item) for item in node]
        if not isinstance(node, dict):
            return node
        reference = node.get("$ref")
        if isinstance(reference, str) and reference.startswith("#/$defs/"):
            target = inline(definitions[reference.removeprefix("#/$defs/")])
            return {**target, **{k: inline(v) for k, v in node.items() if k != "$ref"}}
        return {
            # Inside "properties" the keys are field names (a field may be called "title").
            key: one_line(value)
            if key == "description" and not in_properties
            else inline(value, in_properties=key == "properties")
            for key, value in node.items()
            if in_properties or key != "title"
        }

    return cast(dict[str, Any], inline(schema))


def one_line(text: Any) -> Any:
    """A description as one line: docstrings wrap at 100 columns."""
    return " ".join(text.split()) if isinstance(text, str) else text
