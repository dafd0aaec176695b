"""Semantic kinds: the vocabulary that ties one tool's output to another tool's input.

A kind names what a value *means* (``city``, ``flight_quote_id``, ``usd_amount``), beyond its
JSON type. Each kind may list literal example values that a task can put in its query (for
kinds that only tools produce, such as booking ids, the list is empty). Domain modules
register their own kinds with :func:`kind`.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

#: The corpus's one clock: every tool that needs "now" (current weather, news ages, timers, the
#: last scan of a device) reads this, so domains agree on what day it is. Date examples below
#: are all after it, as a user planning ahead would write them.
CORPUS_NOW = dt.datetime(2026, 11, 30, 12, 0, tzinfo=dt.UTC)


@dataclass(frozen=True)
class Kind:
    name: str
    description: str
    examples: tuple[Any, ...] = field(default_factory=tuple)

    @property
    def literal(self) -> bool:
        """True when a user can state a value of this kind in a query."""
        return bool(self.examples)


KINDS: dict[str, Kind] = {}


def kind(name: str, description: str, examples: list[Any] | tuple[Any, ...] = ()) -> str:
    """Register a kind (idempotent for identical declarations) and return its name."""
    new = Kind(name, description, tuple(examples))
    old = KINDS.get(name)
    if old is not None and old != new:
        raise ValueError(f"kind {name!r} declared twice with different content")
    KINDS[name] = new
    return name


# -- the shared vocabulary (domain modules add their own) -----------------------------------
CITY = kind(
    "city",
    "a city name",
    [
        "Lisbon",
        "Osaka",
        "Denver",
        "Nairobi",
        "Montreal",
        "Krakow",
        "Auckland",
        "Valparaiso",
        "Tallinn",
        "Hanoi",
        "Porto",
        "Austin",
    ],
)
COUNTRY = kind(
    "country",
    "an ISO 3166 alpha-2 country code",
    ["PT", "JP", "US", "KE", "CA", "PL", "NZ", "CL", "EE", "VN", "DE", "FR"],
)
DATE = kind(
    "date",
    "a calendar date, YYYY-MM-DD",
    ["2026-12-03", "2026-12-10", "2027-01-14", "2027-02-02", "2027-03-19", "2027-04-08"],
)
TIME = kind("time", "a time of day, HH:MM", ["09:00", "10:30", "13:00", "15:45", "17:15"])
EMAIL = kind(
    "email",
    "an e-mail address",
    [
        "ana.silva@example.org",
        "kenji.mori@example.jp",
        "dana.reyes@example.com",
        "wanjiru.k@example.co.ke",
        "luc.tremblay@example.ca",
    ],
)
PERSON = kind(
    "person_name",
    "a person's full name",
    ["Ana Silva", "Kenji Mori", "Dana Reyes", "Wanjiru Kamau", "Luc Tremblay", "Marta Nowak"],
)
CURRENCY = kind("currency", "an ISO 4217 currency code", ["USD", "EUR", "JPY", "GBP", "CAD", "PLN"])
USD = kind("usd_amount", "an amount of money in US dollars", [25.0, 120.0, 480.0, 1500.0, 9.99])
MONEY = kind("money_amount", "an amount of money in some currency", [100.0, 250.5, 1200.0])
COUNT = kind("count", "a small positive count", [1, 2, 3, 4, 5])
PERCENT = kind("percentage", "a percentage between 0 and 100", [5.0, 12.5, 20.0, 33.0])
TEXT = kind(
    "text",
    "free text written by the user",
    ["Quarterly numbers look good.", "Please confirm by Friday.", "Running ten minutes late."],
)
URL = kind("url", "a web address", ["https://example.org/report", "https://example.com/menu"])
LANGUAGE = kind(
    "language", "an ISO 639-1 language code", ["en", "pt", "ja", "es", "fr", "de", "pl"]
)
TEMPERATURE = kind("temperature_c", "a temperature in degrees Celsius", [18.0, 20.5, 22.0, 24.0])
DURATION = kind("duration_min", "a duration in minutes", [15, 30, 45, 60, 90])
ADDRESS = kind(
    "address",
    "a street address",
    ["12 Rua Augusta, Lisbon", "3-1 Umeda, Osaka", "400 Larimer St, Denver"],
)
PHONE = kind("phone", "an E.164 phone number", ["+351211234567", "+81661234567", "+13035550123"])

# -- geography and time, shared by General, Travel, Office and IoT ----------------------------
LATITUDE = kind("geo_latitude", "a latitude in decimal degrees (WGS 84)")
LONGITUDE = kind("geo_longitude", "a longitude in decimal degrees (WGS 84)")
TIMEZONE = kind(
    "iana_timezone",
    "an IANA time-zone id",
    [
        "Europe/Lisbon",
        "Asia/Tokyo",
        "America/Denver",
        "Africa/Nairobi",
        "America/Toronto",
        "Europe/Warsaw",
        "Pacific/Auckland",
        "America/Santiago",
        "Europe/Tallinn",
        "Asia/Ho_Chi_Minh",
        "America/Chicago",
        "UTC",
    ],
)
TRAVEL_MODE = kind(
    "travel_mode", "how a route is travelled", ["driving", "walking", "bicycling", "transit"]
)
DISTANCE_KM = kind("route_distance_km", "a distance in kilometres")
