"""IoT: a two-home smart-home world (lights, thermostats, locks, sensors, energy meters,
cameras, appliances, scenes and automations) behind several vendor-style APIs.

Devices live in the ``iot_devices`` collection, so commands are checked against real state
(a device must exist and be online) and change it. Readings are keyed by the device id (and
day), never by the tool, so every API that reports the same sensor, meter or lock agrees.
Each section module (devices, lights, climate, energy, cameras, locks, appliances) holds its
tools and helpers; :mod:`.facts` the homes and devices tables and the device checks they share.
"""

from __future__ import annotations

# importing the section modules registers their implementations (and the start state)
from replan.env.corpus.iot import (  # noqa: F401
    appliances,
    cameras,
    climate,
    devices,
    energy,
    lights,
    locks,
    state,
)
