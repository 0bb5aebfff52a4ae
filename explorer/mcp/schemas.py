"""JSON schemas of the tools, as an agent's client reads them: generated from the argument and
answer models, with every ``$ref`` written out in place (some clients follow no references),
no generated ``title`` (noise in an agent's context), and each description written for an agent
(:func:`one_line`): on one line, its code in Markdown's single backticks, not the double
backticks and roles of the docstrings it comes from.
"""

from __future__ import annotations

import re
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
            beside = {k: v for k, v in node.items() if k != "$ref"}  # the field's own docstring
            return {**target, **inline(beside)}
        return {
            # Inside "properties" the keys are field names (a field may be called "title").
            key: one_line(value)
            if key == "description" and not in_properties
            else inline(value, in_properties=key == "properties")
            for key, value in node.items()
            if in_properties or key != "title"
        }

    return cast(dict[str, Any], inline(schema))


_ROLE = re.compile(r":[a-z]+:`~?([^`]+)`")
"""A docstring's cross-reference (:class:`~x.Y`), shown to an agent as its name."""


def one_line(text: Any) -> Any:
    """A description as an agent reads it: one line (docstrings wrap at 100 columns), code in
    single backticks (``x`` is `x`), a cross-reference as its last name."""
    if not isinstance(text, str):
        return text
    text = _ROLE.sub(lambda found: f"`{found.group(1).rsplit('.', 1)[-1]}`", text)
    return " ".join(text.replace("``", "`").split())
