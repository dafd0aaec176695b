"""Travel: flights, hotels, trains, car hire, visas, insurance, places and trip costing.

Facts live in private helpers keyed by what they describe (``_flights`` by route and day,
``_hotels`` by city, ``_trains`` by stations and day, ...), so alternative providers agree.
Identifiers encode what they name (``FL-LISKIX-20261203-1``), so a later tool can look the
offer up again without state; quotes, holds and bookings live in state. Each section module
(flights, hotels, trains, ...) holds its tools and helpers; :mod:`.facts` the city tables and
helpers that several sections share.
"""

from __future__ import annotations

# importing the section modules registers their implementations (and the start state)
from replan.env.corpus.travel import (  # noqa: F401
    cars,
    costing,
    flights,
    hotels,
    insurance,
    places,
    poi,
    state,
    trains,
    visas,
)
