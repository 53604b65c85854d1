"""What the clients on the official Python a2a-sdk 0.3 line read out of the
SDK's objects (a2a03_hub_client.py and matrix/a2a_sdk03.py run in
.tools/venv03 with it); sdk13.py is the same for the 1.3 line.
"""

from a2a.types import DataPart, TextPart


def first_parts(parts_lists):
    """First data part and first text part across lists of parts."""
    data = text = None
    for parts in parts_lists:
        for part in parts or []:
            p = part.root
            if data is None and isinstance(p, DataPart):
                data = p.data
            if text is None and isinstance(p, TextPart):
                text = p.text
    return data, text
