"""Travel: the seed tables and fact helpers that several sections read (one source per fact)."""

from __future__ import annotations

import datetime as _dt
import math

from replan.env.corpus.data import SeedTables
from replan.env.world import InvalidValue

SEEDS = SeedTables.load(__package__)  # seeds.json beside this module


# -- reference tables -------------------------------------------------------------------------
#: city -> (country, IATA, lat, lon, IANA zone, currency, UN/LOCODE, rail network)
CITIES = SEEDS.table("cities", dict[str, tuple[str, str, float, float, str, str, str, str]])
AIRPORT_NAMES = SEEDS.table("airport_names", dict[str, str])
BY_IATA = {v[1]: k for k, v in CITIES.items()}
BY_LOCODE = {v[6]: k for k, v in CITIES.items()}
#: standard (non-DST) offset in seconds and display name of each zone
ZONES = SEEDS.table("zones", dict[str, tuple[int, str]])
CARRIERS = SEEDS.table("carriers", list[str])


def city(param: str, name: str) -> tuple[str, str, float, float, str, str, str, str]:
    try:
        return CITIES[name]
    except KeyError as exc:
        raise InvalidValue(param, f"unknown city {name!r}") from exc


def airport_city(param: str, iata: str) -> str:
    try:
        return BY_IATA[iata]
    except KeyError as exc:
        raise InvalidValue(param, f"no service at airport {iata!r}") from exc


def km(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lon2 - lon1)
    a = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 6371.0 * 2 * math.asin(math.sqrt(a))


def ymd(date: str) -> str:
    return date.replace("-", "")


def iso(ymd: str) -> str:
    return f"{ymd[:4]}-{ymd[4:6]}-{ymd[6:]}"


def plus_days(date: str, days: int) -> str:
    return (_dt.date.fromisoformat(date) + _dt.timedelta(days)).isoformat()


STREETS = SEEDS.table("streets", list[str])
