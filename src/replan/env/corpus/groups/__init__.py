"""Many-to-many (N-N) routes to one fact: pairs of two-call chains from different providers.

Each module of this package (one per group) offers two chains of two tools that take the same
input kinds and end in the same fact (a supplier's remittance e-mail, a city's country, a
barcode's store SKU, ...). Facts live in private helpers keyed by what they describe, never by
the tool, so both chains agree; intermediate handles (supplier numbers, ICAO idents, scan ids)
encode what they name.
"""

from __future__ import annotations

# importing the section modules registers their implementations (and the start state)
from replan.env.corpus.groups import (  # noqa: F401
    barcode,
    business_day,
    city_country,
    free_slot,
    payee,
    remittance,
    station_high,
)
