"""Office: calendar, e-mail, contacts, documents, spreadsheets, tasks, chat and meeting rooms.

Translation and time-zone conversion live in the General domain; Office tools chain into them
through the shared ``text``, ``language`` and ``iana_timezone`` kinds (a mail body or a document
goes to a translator, a chat member's zone to a time converter).

Busy hours, mailbox search, sheet contents and room bookings each come from one helper, so two
providers (a free/busy search and a meeting-time suggester, messages and threads, a workbook SUM
and reading the range then adding it up, a room finder and a space search) report the same fact.
Each section module (calendar, email, contacts, documents, sheets, tasks, chat, rooms) holds its
tools and helpers; :mod:`.facts` the fixed tables and small helpers that several share.
"""

from __future__ import annotations

# importing the section modules registers their implementations (and the start state)
from replan.env.corpus.office import (  # noqa: F401
    calendar,
    chat,
    contacts,
    documents,
    email,
    rooms,
    sheets,
    state,
    tasks,
)
