"""General: weather, geocoding, routing, time zones, units, news, web, language, maths,
recipes and nutrition, reminders and timers.

Facts come from seed tables (``seeds.json``: cities, unit factors, recipes, nutrients; the
time-zone rules are shared, in :mod:`replan.env.corpus.timezones`) or from ``ctx.number`` /
``ctx.pick`` keyed by the fact itself (a place's coordinates, a day's forecast, a query's
results), never by the tool, so every provider of the same fact agrees. The world clock is
fixed at ``facts.NOW`` (news ages, current weather, timers). Each section module (weather, geo,
time_zones, units, news, language, calculators, recipes, reminders) holds its tools and helpers;
:mod:`.facts` the place, sun and weather facts that several sections share.
"""

from __future__ import annotations

# importing the section modules registers their implementations (and the start state)
from replan.env.corpus.general import (  # noqa: F401
    calculators,
    geo,
    language,
    news,
    recipes,
    reminders,
    state,
    time_zones,
    units,
    weather,
)
