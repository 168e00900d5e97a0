"""calendar: a company calendar's people, meeting rooms, events and invitations."""

from __future__ import annotations

from datetime import date as Date
from datetime import datetime
from typing import Literal

from agentworld_gym.theme import Theme
from agentworld_gym.tools import WRITE, Db, ToolError, tool
from agentworld_gym.world import Column, Table, ThemeSpec, choice_col, date_col, faker_col, fk_col, id_col, int_col

ROOM_NAMES = ("Aurora", "Birch", "Cedar", "Delta", "Ember", "Fjord", "Granite", "Harbor", "Iris", "Juniper")
TITLES = ("Sprint planning", "Design review", "1:1", "Team sync", "Quarterly review", "Customer call", "Hiring debrief",
          "Architecture deep dive", "Retrospective", "Budget check-in")
STARTS = tuple(f"{h:02d}:{m:02d}" for h in range(9, 17) for m in (0, 30))
DURATIONS = (30, 45, 60, 90)
FUTURE_WEEKDAYS = ["2025-06-02", "2025-06-03", "2025-06-04", "2025-06-05", "2025-06-06", "2025-06-09", "2025-06-10"]
START_EXAMPLES = ["09:00", "10:30", "11:00", "13:30", "15:00", "16:30"]

SPEC = ThemeSpec(
    id="calendar",
    title="Meetwise Calendar",
    category="Communication & General Utilities",
    subcategory="Time, Calendar & Scheduling",
    label="team calendar and room booking",
    description="You help colleagues schedule meetings, book rooms and manage invitations.",
    tables=(
        Table("users", (
            id_col("user_id", "UR-"), faker_col("name", "name"), faker_col("email", "email", unique=True),
            choice_col("timezone", ["America/New_York", "Europe/London", "Asia/Singapore"], [0.6, 0.3, 0.1]),
            choice_col("work_start", ["07:00", "08:00", "09:00", "10:00"], [0.15, 0.35, 0.4, 0.1]),
            choice_col("work_end", ["16:00", "17:00", "18:00"], [0.25, 0.5, 0.25]),
        ), rows=30),
        Table("rooms", (
            id_col("room_id", "RM-", 101), Column("name", "faker", ("random_element", ROOM_NAMES), unique=True), int_col("floor", 1, 6),
            choice_col("capacity", [4, 6, 8, 12, 20], type="int"), choice_col("video", ["yes", "no"], [0.6, 0.4]),
        ), rows=len(ROOM_NAMES)),
        Table("events", (
            id_col("event_id", "EV-", 2001), fk_col("organizer_id", "users"), Column("room_id", "fk", "rooms", nullable_share=0.3),
            choice_col("title", TITLES), date_col("date", "2025-05-26", "2025-06-20"), choice_col("start", STARTS),
            choice_col("duration_min", DURATIONS, [0.35, 0.15, 0.35, 0.15], type="int"),
            choice_col("status", ["confirmed", "cancelled"], [0.9, 0.1]),
        ), rows=90),
        Table("invitations", (
            id_col("invitation_id", "IN-", 5001), fk_col("event_id", "events"), fk_col("user_id", "users"),
            choice_col("response", ["pending", "accepted", "declined", "tentative"], [0.3, 0.45, 0.15, 0.1]),
        ), rows=200),
    ),
    rules=(
        "Only an event's organiser may change it: reschedule, cancel, book its room or invite people.",
        "Events are on weekdays, in the future, and inside the organiser's working hours.",
        "A room cannot host two confirmed events that overlap, and must seat the organiser plus every invitee who has not declined.",
        "Only the invitee answers an invitation, and nobody is invited twice (the organiser is never invited).",
    ),
    extra={"seed_repair": "agentworld_gym.envs.themes.calendar:repair_seed", "rule_check": "agentworld_gym.envs.themes.calendar:seed_violations"},
)


def repair_seed(rows: dict[str, list[dict]], rng) -> None:
    """Make the independently drawn seed rows obey the rules: weekday events inside the organiser's
    working hours, no room double-booked or over capacity, nobody invited twice, organisers never invited."""
    users = {u["user_id"]: u for u in rows["users"]}
    rooms = {r["room_id"]: r for r in rows["rooms"]}
    for e in rows["events"]:
        day = Date.fromisoformat(e["date"])
        if day.weekday() >= 5:  # Saturday -> Friday, Sunday -> Monday: the range has both around every weekend
            day = Date.fromordinal(day.toordinal() + (-1 if day.weekday() == 5 else 1))
            e["date"] = day.isoformat()
        u = users[e["organizer_id"]]
        fits = [s for s in STARTS if _minutes(s) >= _minutes(u["work_start"]) and _minutes(s) + e["duration_min"] <= _minutes(u["work_end"])]
        if e["start"] not in fits:
            e["start"] = fits[int(rng.integers(len(fits)))] if fits else u["work_start"]
            if not fits:
                e["duration_min"] = DURATIONS[0]
    seen: set[tuple[str, str]] = set()
    ids = list(users)
    for inv in rows["invitations"]:
        organiser = next(e["organizer_id"] for e in rows["events"] if e["event_id"] == inv["event_id"])
        if inv["user_id"] == organiser or (inv["event_id"], inv["user_id"]) in seen:
            free = [u for u in ids if u != organiser and (inv["event_id"], u) not in seen]
            inv["user_id"] = free[int(rng.integers(len(free)))]
        seen.add((inv["event_id"], inv["user_id"]))
    taken: list[dict] = []
    for e in rows["events"]:
        if e["room_id"] is None or e["status"] != "confirmed":
            continue
        seats = 1 + sum(1 for i in rows["invitations"] if i["event_id"] == e["event_id"] and i["response"] != "declined")
        clash = any(o["room_id"] == e["room_id"] and o["date"] == e["date"] and _minutes(o["start"]) < _minutes(e["start"]) + e["duration_min"]
                    and _minutes(e["start"]) < _minutes(o["start"]) + o["duration_min"] for o in taken)
        if clash or seats > rooms[e["room_id"]]["capacity"]:
            e["room_id"] = None  # an unbooked event breaks no room rule
        else:
            taken.append(e)


def seed_violations(conn) -> list[str]:
    """The calendar rules a world breaks (empty for a valid world)."""
    out = []
    for e in conn.execute("SELECT e.event_id, e.date, e.start, e.duration_min, u.work_start, u.work_end FROM events e "
                          "JOIN users u ON u.user_id = e.organizer_id"):
        if Date.fromisoformat(e[1]).weekday() >= 5:
            out.append(f"event {e[0]} is on a weekend ({e[1]})")
        if _minutes(e[2]) < _minutes(e[4]) or _minutes(e[2]) + e[3] > _minutes(e[5]):
            out.append(f"event {e[0]} is outside its organiser's working hours")
    for r in conn.execute("SELECT i.invitation_id FROM invitations i JOIN events e ON e.event_id = i.event_id WHERE i.user_id = e.organizer_id"):
        out.append(f"invitation {r[0]} invites the organiser")
    for r in conn.execute("SELECT event_id, user_id, COUNT(*) FROM invitations GROUP BY event_id, user_id HAVING COUNT(*) > 1"):
        out.append(f"{r[1]} is invited to {r[0]} {r[2]} times")
    events = conn.execute("SELECT event_id, room_id, date, start, duration_min FROM events WHERE status = 'confirmed' AND room_id IS NOT NULL").fetchall()
    for i, a in enumerate(events):
        for b in events[i + 1:]:
            if a[1] == b[1] and a[2] == b[2] and _minutes(a[3]) < _minutes(b[3]) + b[4] and _minutes(b[3]) < _minutes(a[3]) + a[4]:
                out.append(f"room {a[1]} hosts overlapping events {a[0]} and {b[0]}")
        seats = 1 + conn.execute("SELECT COUNT(*) FROM invitations WHERE event_id = ? AND response != 'declined'", (a[0],)).fetchone()[0]
        if seats > conn.execute("SELECT capacity FROM rooms WHERE room_id = ?", (a[1],)).fetchone()[0]:
            out.append(f"room {a[1]} is too small for event {a[0]}")
    return out


def _minutes(hhmm: str) -> int:
    h, m = hhmm.split(":")
    return int(h) * 60 + int(m)


def _hhmm(minutes: int) -> str:
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def _attendees(db: Db, event_id: str) -> int:
    return 1 + db.value("SELECT COUNT(*) FROM invitations WHERE event_id = ? AND response != 'declined'", (event_id,))


def _organised(db: Db, event_id: str, user_id: str) -> dict:
    event = db.get("events", event_id, "Event")
    db.get("users", user_id, "User")
    if event["organizer_id"] != user_id:
        raise ToolError(f"Only the organiser ({event['organizer_id']}) can change event {event_id}, not {user_id}.")
    if event["status"] != "confirmed":
        raise ToolError(f"Event {event_id} is {event['status']}.")
    return event


def _check_time(db: Db, user: dict, day: str, start: str, duration: int) -> None:
    try:
        when = datetime.fromisoformat(f"{day}T{start}:00")
    except ValueError:
        raise ToolError(f"Expected a date like 2025-06-03 and a time like 14:30, got {day!r} {start!r}.") from None
    if when.weekday() >= 5:
        raise ToolError(f"{day} is a {when:%A}; meetings are on weekdays.")
    if when <= datetime.fromisoformat(db.now):
        raise ToolError(f"{day} {start} is in the past.")
    if duration <= 0:
        raise ToolError(f"The duration must be positive, got {duration}.")
    begin, end = _minutes(start), _minutes(start) + duration
    if begin < _minutes(user["work_start"]) or end > _minutes(user["work_end"]):
        raise ToolError(f"{start}-{_hhmm(end)} is outside {user['user_id']}'s working hours ({user['work_start']}-{user['work_end']}).")


def _room_clash(db: Db, room_id: str, day: str, start: str, duration: int, ignore: str = "") -> str | None:
    """The id of a confirmed event in the room that overlaps the slot, if any."""
    begin, end = _minutes(start), _minutes(start) + duration
    for e in db.all("SELECT event_id, start, duration_min FROM events WHERE room_id = ? AND date = ? AND status = 'confirmed' "
                    "AND event_id != ? ORDER BY start, event_id", (room_id, day, ignore)):
        if _minutes(e["start"]) < end and begin < _minutes(e["start"]) + e["duration_min"]:
            return e["event_id"]
    return None


@tool(produces=("user_id",), phrase="find the colleague whose email is {email}")
def find_user_by_email(db: Db, email: str) -> dict:
    """Find a colleague by email address.

    Args:
        email: The email address.
    """
    row = db.one("SELECT * FROM users WHERE lower(email) = lower(?)", (email.strip(),))
    if row is None:
        raise ToolError(f"No user with email {email!r}.")
    return row


@tool(produces=("user_id",), phrase="look up {user_id}")
def get_user(db: Db, user_id: str) -> dict:
    """Get a colleague's working hours and how many events they organise and are invited to.

    Args:
        user_id: The user id, e.g. "UR-1001".
    """
    user = db.get("users", user_id, "User")
    organised = db.value("SELECT COUNT(*) FROM events WHERE organizer_id = ? AND status = 'confirmed'", (user_id,))
    invited = db.value("SELECT COUNT(*) FROM invitations WHERE user_id = ?", (user_id,))
    return {**user, "events_organised": organised, "invitations": invited}


@tool(produces=("event_id", "room_id"), phrase="list the events on the calendar of {user_id}")
def list_events(db: Db, user_id: str, date: str | None = None) -> list:
    """List the confirmed events a colleague organises or is invited to (and has not declined), in time order.

    Args:
        user_id: The user id.
        date: Only events on this date (YYYY-MM-DD).
    """
    db.get("users", user_id, "User")
    sql = ("SELECT e.*, CASE WHEN e.organizer_id = ? THEN 'organiser' ELSE 'invitee' END AS role FROM events e "
           "WHERE e.status = 'confirmed' AND (e.organizer_id = ? OR e.event_id IN "
           "(SELECT event_id FROM invitations WHERE user_id = ? AND response != 'declined'))")
    params: list = [user_id, user_id, user_id]
    if date:
        sql, params = sql + " AND e.date = ?", params + [date]
    return db.all(sql + " ORDER BY e.date, e.start, e.event_id", params)


@tool(produces=("event_id", "room_id"), phrase="look up {event_id}")
def get_event(db: Db, event_id: str) -> dict:
    """Get an event with its end time, invitations and number of attendees.

    Args:
        event_id: The event id, e.g. "EV-2001".
    """
    event = db.get("events", event_id, "Event")
    invites = db.all("SELECT invitation_id, user_id, response FROM invitations WHERE event_id = ? ORDER BY invitation_id", (event_id,))
    return {**event, "end": _hhmm(_minutes(event["start"]) + event["duration_min"]), "attendees": _attendees(db, event_id),
            "invitations": invites}


@tool(produces=("room_id",), phrase="find rooms free on {date} at {start} for {duration_min} minutes",
      examples={"date": FUTURE_WEEKDAYS, "start": START_EXAMPLES})
def find_free_rooms(db: Db, date: str, start: str, duration_min: Literal[DURATIONS], min_capacity: int | None = None) -> list:
    """List the rooms with no confirmed event overlapping a time slot, smallest first.

    Args:
        date: The date (YYYY-MM-DD).
        start: The start time (HH:MM).
        duration_min: The length in minutes.
        min_capacity: Only rooms seating at least this many.
    """
    try:
        _minutes(start)
        Date.fromisoformat(date)
    except ValueError:
        raise ToolError(f"Expected a date like 2025-06-03 and a time like 14:30, got {date!r} {start!r}.") from None
    begin, end = _minutes(start), _minutes(start) + duration_min
    busy = {e["room_id"] for e in db.all("SELECT room_id, start, duration_min FROM events WHERE date = ? AND status = 'confirmed' "
                                         "AND room_id IS NOT NULL ORDER BY room_id", (date,))
            if _minutes(e["start"]) < end and begin < _minutes(e["start"]) + e["duration_min"]}
    rooms = db.all("SELECT * FROM rooms WHERE capacity >= ? ORDER BY capacity, room_id", (min_capacity or 1,))
    return [r for r in rooms if r["room_id"] not in busy]


@tool(produces=("room_id",), phrase="look up {room_id}")
def get_room(db: Db, room_id: str) -> dict:
    """Get a room's floor, capacity, video equipment and how many upcoming events it hosts.

    Args:
        room_id: The room id, e.g. "RM-101".
    """
    room = db.get("rooms", room_id, "Room")
    upcoming = db.value("SELECT COUNT(*) FROM events WHERE room_id = ? AND status = 'confirmed' AND date >= ?", (room_id, db.now[:10]))
    return {**room, "upcoming_events": upcoming}


@tool(produces=("invitation_id", "event_id"), phrase="list the {response} invitations of {user_id}")
def list_invitations(db: Db, user_id: str, response: Literal["pending", "accepted", "declined", "tentative"] | None = None) -> list:
    """List a colleague's invitations with each event's title and time.

    Args:
        user_id: The user id.
        response: Only invitations with this answer.
    """
    db.get("users", user_id, "User")
    sql = ("SELECT i.*, e.title, e.date, e.start, e.status AS event_status FROM invitations i JOIN events e ON e.event_id = i.event_id "
           "WHERE i.user_id = ?")
    params = [user_id]
    if response:
        sql, params = sql + " AND i.response = ?", params + [response]
    return db.all(sql + " ORDER BY e.date, e.start, i.invitation_id", params)


@tool(mode=WRITE, produces=("event_id",), phrase="as {user_id}, schedule '{title}' on {date} at {start} for {duration_min} minutes",
      examples={"title": list(TITLES), "date": FUTURE_WEEKDAYS, "start": START_EXAMPLES})
def create_event(db: Db, user_id: str, title: str, date: str, start: str, duration_min: Literal[DURATIONS]) -> dict:
    """Create an event (without a room) organised by a colleague.

    Args:
        user_id: The organiser.
        title: The event title.
        date: The date (YYYY-MM-DD).
        start: The start time (HH:MM).
        duration_min: The length in minutes.
    """
    user = db.get("users", user_id, "User")
    if not title.strip():
        raise ToolError("The title must not be empty.")
    _check_time(db, user, date, start, duration_min)
    event_id = db.next_id("events", "EV-", 2001)
    db.insert("events", {"event_id": event_id, "organizer_id": user_id, "room_id": None, "title": title.strip(), "date": date,
                         "start": start, "duration_min": duration_min, "status": "confirmed"})
    return {"event_id": event_id, "status": "confirmed", "end": _hhmm(_minutes(start) + duration_min)}


@tool(mode=WRITE, produces=("event_id", "room_id"), phrase="as {user_id}, book {room_id} for {event_id}")
def book_room(db: Db, event_id: str, user_id: str, room_id: str) -> dict:
    """Book a room for an event (organiser only), if it is free and big enough.

    Args:
        event_id: The event id.
        user_id: The organiser.
        room_id: The room id.
    """
    event = _organised(db, event_id, user_id)
    room = db.get("rooms", room_id, "Room")
    if event["room_id"] == room_id:
        raise ToolError(f"Event {event_id} is already in room {room_id}.")
    people = _attendees(db, event_id)
    if room["capacity"] < people:
        raise ToolError(f"Room {room_id} seats {room['capacity']}, but event {event_id} has {people} attendees.")
    clash = _room_clash(db, room_id, event["date"], event["start"], event["duration_min"], ignore=event_id)
    if clash:
        raise ToolError(f"Room {room_id} is already booked by event {clash} at that time.")
    db.update("events", event_id, room_id=room_id)
    return {"event_id": event_id, "room_id": room_id, "room_name": room["name"], "previous_room_id": event["room_id"]}


@tool(mode=WRITE, produces=("invitation_id", "event_id"), phrase="as {user_id}, invite {invitee_user_id} to {event_id}")
def invite_user(db: Db, event_id: str, user_id: str, invitee_user_id: str) -> dict:
    """Invite a colleague to an event (organiser only); a booked room must still seat everyone.

    Args:
        event_id: The event id.
        user_id: The organiser.
        invitee_user_id: The colleague to invite.
    """
    event = _organised(db, event_id, user_id)
    db.get("users", invitee_user_id, "User")
    if invitee_user_id == event["organizer_id"]:
        raise ToolError(f"User {invitee_user_id} organises event {event_id} and cannot be invited to it.")
    if db.value("SELECT COUNT(*) FROM invitations WHERE event_id = ? AND user_id = ?", (event_id, invitee_user_id)):
        raise ToolError(f"User {invitee_user_id} is already invited to event {event_id}.")
    if event["room_id"]:
        capacity = db.get("rooms", event["room_id"])["capacity"]
        if _attendees(db, event_id) + 1 > capacity:
            raise ToolError(f"Room {event['room_id']} seats {capacity}; event {event_id} is full.")
    invitation_id = db.next_id("invitations", "IN-", 5001)
    db.insert("invitations", {"invitation_id": invitation_id, "event_id": event_id, "user_id": invitee_user_id, "response": "pending"})
    return {"invitation_id": invitation_id, "event_id": event_id, "response": "pending", "attendees": _attendees(db, event_id)}


@tool(mode=WRITE, produces=("invitation_id",), phrase="mark {invitation_id} as {response}")
def respond_to_invitation(db: Db, invitation_id: str, response: Literal["accepted", "declined", "tentative"]) -> dict:
    """Answer an invitation on the invitee's behalf, for a confirmed event that has not happened yet.

    Args:
        invitation_id: The invitation id.
        response: The answer.
    """
    inv = db.get("invitations", invitation_id, "Invitation")
    event = db.get("events", inv["event_id"], "Event")
    if event["status"] != "confirmed":
        raise ToolError(f"Event {event['event_id']} is {event['status']}.")
    if f"{event['date']}T{event['start']}:00" <= db.now:
        raise ToolError(f"Event {event['event_id']} has already started.")
    if inv["response"] == response:
        raise ToolError(f"Invitation {invitation_id} is already {response}.")
    db.update("invitations", invitation_id, response=response)
    return {"invitation_id": invitation_id, "event_id": event["event_id"], "response": response, "previous_response": inv["response"]}


@tool(mode=WRITE, produces=("event_id",), phrase="as {user_id}, move {event_id} to {date} at {start}",
      examples={"date": FUTURE_WEEKDAYS, "start": START_EXAMPLES})
def reschedule_event(db: Db, event_id: str, user_id: str, date: str, start: str) -> dict:
    """Move an event to a new date and time (organiser only); its room must be free then.

    Args:
        event_id: The event id.
        user_id: The organiser.
        date: The new date (YYYY-MM-DD).
        start: The new start time (HH:MM).
    """
    event = _organised(db, event_id, user_id)
    if (event["date"], event["start"]) == (date, start):
        raise ToolError(f"Event {event_id} is already at {date} {start}.")
    _check_time(db, db.get("users", user_id), date, start, event["duration_min"])
    if event["room_id"]:
        clash = _room_clash(db, event["room_id"], date, start, event["duration_min"], ignore=event_id)
        if clash:
            raise ToolError(f"Room {event['room_id']} is booked by event {clash} then.")
    db.update("events", event_id, date=date, start=start)
    return {"event_id": event_id, "previous": f"{event['date']} {event['start']}", "date": date, "start": start}


@tool(mode=WRITE, produces=("event_id",), phrase="as {user_id}, cancel {event_id}")
def cancel_event(db: Db, event_id: str, user_id: str) -> dict:
    """Cancel an event (organiser only); its room is released.

    Args:
        event_id: The event id.
        user_id: The organiser.
    """
    event = _organised(db, event_id, user_id)
    db.update("events", event_id, status="cancelled")
    notified = db.value("SELECT COUNT(*) FROM invitations WHERE event_id = ? AND response != 'declined'", (event_id,))
    return {"event_id": event_id, "status": "cancelled", "room_released": event["room_id"], "invitees_notified": notified}


THEME = Theme(SPEC, [find_user_by_email, get_user, list_events, get_event, find_free_rooms, get_room, list_invitations,
                     create_event, book_room, invite_user, respond_to_invitation, reschedule_event, cancel_event])
