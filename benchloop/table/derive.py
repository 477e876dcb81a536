"""What a part's value and a dimension's printed element are, worked out of the table (``outputs``).

Why its own module: it reads the model's parts (a step's declared output, a waiter's request,
an answer's response and its transform), which ``outputs`` (imported by the model) cannot, and
it is no name resolution, which is all ``build`` does; the builder calls it once per dimension.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from . import outputs
from .model import Combine, Element, PagedPart, Part, RequestPart, StepPart, WaitPart

if TYPE_CHECKING:
    from .responses import Schemas


def part_output(data: Mapping[str, Any], part: Part, schemas: Schemas) -> outputs.Output | None:
    """What one part's value is: declared (``output:``), or worked out of its answer and
    transform, or of its step's declaration; None when neither says."""
    if data.get("output"):
        return outputs.declared(data["output"], schemas)
    if isinstance(part, StepPart):
        said = part.step.output
        if not said:
            return None
        if "columns" in said:
            return outputs.of_columns(part.params.get(said["columns"]) or (), schemas)
        return outputs.declared(said, schemas)
    if isinstance(part, WaitPart):  # the last answer of its request, when it produces that
        waiter = part.wait
        if waiter.result is not None or waiter.request is None:
            return None
        shape = part.shape
        return outputs.of_response(waiter.request.response, shape.name if shape else None,
                                   shape.params if shape else {}, schemas)
    items = getattr(part, "items", None)
    if isinstance(part, RequestPart) and items is not None and part.shape is None:
        return outputs.of_items(part.request.response, items.collection, items.find, tuple(items.add), schemas)
    if isinstance(part, (RequestPart, PagedPart)) and items is None:
        shape = part.shape
        return outputs.of_response(part.request.response, shape.name if shape else None,
                                   shape.params if shape else {}, schemas)
    return None


def dimension_output(data: Mapping[str, Any], raw_parts: Mapping[str, Any], parts: Mapping[str, Part],
                     el: Element, listing: bool, combine: Combine | None, schemas: Schemas) -> outputs.Output | None:
    """What one printed element of a dimension is (None: it cannot be worked out; the lints
    refuse that for a printing action)."""
    if data.get("output"):
        found: outputs.Output | None = outputs.declared(data["output"], schemas)
    else:
        each = {n: part_output(raw_parts[n], p, schemas) for n, p in parts.items()}
        if el.kind == "object" and el.id_key and all(o is not None for o in each.values()):
            found = outputs.of_object(el.id_key, {n: o for n, o in each.items() if o is not None}, schemas)
        elif el.kind == "part" and el.part:
            found = each.get(el.part)
        elif el.kind == "part" and all(o is not None for o in each.values()):
            found = outputs.one_of([o for o in each.values() if o is not None], schemas)
        else:
            found = None
    if found is not None and listing:
        found = outputs.each_row(found)  # a listing prints its entries one by one
    if combine is not None:
        said = combine.definition.output
        if said == "rows":
            found = outputs.each_row(found) if found is not None else None
        elif said:
            found = outputs.declared(said, schemas)
        else:
            found = None
    return found
