"""travel: an airline-and-hotel booking desk: passengers, flights, bookings, hotels and reservations."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from agentworld_gym.theme import Theme
from agentworld_gym.tools import WRITE, Db, ToolError, tool
from agentworld_gym.world import Table, ThemeSpec, choice_col, date_col, faker_col, fk_col, id_col, int_col, money_col

HUBS = ("JFK", "ORD", "ATL", "SFO", "DFW")
DESTINATIONS = ("LAX", "MIA", "SEA", "BOS", "DEN", "LHR", "CDG", "NRT")
CITIES = ("Los Angeles", "Miami", "Seattle", "Boston", "Denver", "London", "Paris", "Tokyo")
HOTEL_NAMES = ("Harbor View Inn", "Grand Meridian", "Parkside Suites", "The Lantern House", "Skyline Tower Hotel",
               "Riverside Lodge", "Old Town Residence", "Airport Comfort Inn", "The Gallery Hotel", "Seabreeze Resort")
DEPARTURES = ("06:15", "08:40", "10:05", "12:30", "14:50", "17:20", "19:45", "22:10")
CHANGE_FEE = {"economy": 75.0, "business": 0.0}
CANCEL_FEE = {"economy": 100.0, "business": 0.0}
FREE_BAGS = {"economy": 1, "business": 2}
MAX_BAGS = 3
BAG_FEE = 40.0
MAX_NIGHTS = 14

SPEC = ThemeSpec(
    id="travel",
    title="Skyway Travel",
    category="Travel & Transportation",
    subcategory="Booking & Hospitality",
    label="flight and hotel booking",
    description="You help travellers search, book, change and cancel flights and hotel stays.",
    tables=(
        Table("passengers", (
            id_col("passenger_id", "PA-"), faker_col("name", "name"), faker_col("email", "email", unique=True),
            faker_col("phone", "phone_number"), choice_col("tier", ["basic", "silver", "gold"], [0.6, 0.3, 0.1]),
            date_col("born", "1950-01-01", "2006-12-31"),
        ), rows=40),
        Table("flights", (
            id_col("flight_id", "FL-", 301), choice_col("origin", HUBS), choice_col("destination", DESTINATIONS),
            date_col("date", "2025-05-25", "2025-07-10"), choice_col("departs", DEPARTURES),
            int_col("seats_economy", 0, 30), int_col("seats_business", 0, 6),
            money_col("fare_economy", 90, 650), money_col("fare_business", 700, 2600),
            choice_col("status", ["scheduled", "delayed", "cancelled"], [0.85, 0.1, 0.05]),
        ), rows=50),
        Table("bookings", (
            id_col("booking_id", "BK-", 4001), fk_col("passenger_id", "passengers"), fk_col("flight_id", "flights"),
            choice_col("cabin", ["economy", "business"], [0.8, 0.2]), int_col("bags", 0, 2), money_col("fare_paid", 90, 2000),
            choice_col("status", ["confirmed", "cancelled"], [0.9, 0.1]), date_col("booked", "2025-03-01", "2025-05-31"),
        ), rows=80),
        Table("hotels", (
            id_col("hotel_id", "HT-", 601), choice_col("name", HOTEL_NAMES), choice_col("city", CITIES), int_col("stars", 2, 5),
            money_col("nightly_rate", 70, 450), int_col("rooms_free", 0, 10),
        ), rows=24),
        Table("reservations", (
            id_col("reservation_id", "RS-", 8001), fk_col("passenger_id", "passengers"), fk_col("hotel_id", "hotels"),
            date_col("check_in", "2025-05-20", "2025-07-15"), int_col("nights", 1, 7),
            choice_col("status", ["confirmed", "cancelled"], [0.85, 0.15]),
        ), rows=40),
    ),
    rules=(
        "A flight can be booked only if it has not departed, is not cancelled and has a free seat in the requested cabin.",
        f"Changing a booking costs {CHANGE_FEE['economy']:.0f} in economy (free in business) plus any fare increase; "
        "the new flight must fly the same route.",
        f"Cancelling costs {CANCEL_FEE['economy']:.0f} in economy (free in business); within 24 hours of departure nothing is refunded.",
        f"Free checked bags: {FREE_BAGS['economy']} in economy, {FREE_BAGS['business']} in business, one more for gold members; "
        f"extra bags cost {BAG_FEE:.0f} each and no booking may have more than {MAX_BAGS}.",
        f"Hotel stays need a free room, a check-in date from today on and 1 to {MAX_NIGHTS} nights; they can be cancelled until the check-in day.",
    ),
)


def _departure(flight: dict) -> datetime:
    return datetime.fromisoformat(f"{flight['date']}T{flight['departs']}:00")


def _hours_until(db: Db, flight: dict) -> float:
    return (_departure(flight) - datetime.fromisoformat(db.now)).total_seconds() / 3600


def _bookable(db: Db, flight: dict, cabin: str) -> None:
    if flight["status"] == "cancelled":
        raise ToolError(f"Flight {flight['flight_id']} is cancelled.")
    if _hours_until(db, flight) <= 0:
        raise ToolError(f"Flight {flight['flight_id']} has already departed.")
    if flight[f"seats_{cabin}"] < 1:
        raise ToolError(f"Flight {flight['flight_id']} has no free {cabin} seats.")


def _confirmed_booking(db: Db, booking_id: str) -> tuple[dict, dict]:
    booking = db.get("bookings", booking_id, "Booking")
    if booking["status"] != "confirmed":
        raise ToolError(f"Booking {booking_id} is {booking['status']}.")
    flight = db.get("flights", booking["flight_id"], "Flight")
    if _hours_until(db, flight) <= 0:
        raise ToolError(f"Flight {flight['flight_id']} of booking {booking_id} has already departed.")
    return booking, flight


@tool(produces=("passenger_id",), phrase="find the traveller whose email is {email}")
def find_passenger_by_email(db: Db, email: str) -> dict:
    """Find a passenger by their email address.

    Args:
        email: The passenger's email address.
    """
    row = db.one("SELECT * FROM passengers WHERE lower(email) = lower(?)", (email.strip(),))
    if row is None:
        raise ToolError(f"No passenger with email {email!r}.")
    return row


@tool(produces=("passenger_id",), phrase="look up the profile of {passenger_id}")
def get_passenger(db: Db, passenger_id: str) -> dict:
    """Get a passenger's profile, loyalty tier and booking ids.

    Args:
        passenger_id: The passenger id, e.g. "PA-1001".
    """
    p = db.get("passengers", passenger_id, "Passenger")
    ids = [r["booking_id"] for r in db.all("SELECT booking_id FROM bookings WHERE passenger_id = ? ORDER BY booking_id", (passenger_id,))]
    return {**p, "booking_count": len(ids), "booking_ids": ids}


@tool(produces=("booking_id", "passenger_id", "flight_id"), phrase="list the {status} flight bookings of {passenger_id}")
def list_bookings(db: Db, passenger_id: str, status: Literal["confirmed", "cancelled"] | None = None) -> list:
    """List a passenger's flight bookings with route and date, by departure date.

    Args:
        passenger_id: The passenger id.
        status: Only bookings with this status.
    """
    db.get("passengers", passenger_id, "Passenger")
    sql = ("SELECT b.*, f.origin, f.destination, f.date, f.departs FROM bookings b JOIN flights f ON f.flight_id = b.flight_id "
           "WHERE b.passenger_id = ?")
    params = [passenger_id]
    if status:
        sql, params = sql + " AND b.status = ?", params + [status]
    return db.all(sql + " ORDER BY f.date, f.departs, b.booking_id", params)


@tool(produces=("booking_id", "passenger_id", "flight_id"), phrase="look up {booking_id}")
def get_booking(db: Db, booking_id: str) -> dict:
    """Get a booking with its flight's route, date, time and status.

    Args:
        booking_id: The booking id, e.g. "BK-4001".
    """
    b = db.get("bookings", booking_id, "Booking")
    f = db.get("flights", b["flight_id"], "Flight")
    return {**b, "origin": f["origin"], "destination": f["destination"], "date": f["date"], "departs": f["departs"],
            "flight_status": f["status"]}


@tool(produces=("flight_id",), phrase="search for upcoming {destination} flights leaving {origin}")
def search_flights(db: Db, origin: Literal[HUBS], destination: Literal[DESTINATIONS] | None = None, date: str | None = None) -> list:
    """Search flights that have not departed and are not cancelled, by departure time.

    Args:
        origin: The departure airport code.
        destination: The arrival airport code.
        date: Only flights on this date (YYYY-MM-DD).
    """
    sql = "SELECT * FROM flights WHERE origin = ? AND status != 'cancelled' AND (date || 'T' || departs || ':00') > ?"
    params: list = [origin, db.now]
    if destination:
        sql, params = sql + " AND destination = ?", params + [destination]
    if date:
        sql, params = sql + " AND date = ?", params + [date]
    return db.all(sql + " ORDER BY date, departs, flight_id", params)


@tool(produces=("flight_id",), phrase="look up {flight_id}")
def get_flight(db: Db, flight_id: str) -> dict:
    """Get a flight's route, schedule, free seats, fares and status.

    Args:
        flight_id: The flight id, e.g. "FL-301".
    """
    return db.get("flights", flight_id, "Flight")


@tool(produces=("hotel_id",), phrase="find hotels in {city}")
def search_hotels(db: Db, city: Literal[CITIES], min_stars: int | None = None) -> list:
    """Search hotels in a city, cheapest first.

    Args:
        city: The city.
        min_stars: Only hotels with at least this many stars.
    """
    sql, params = "SELECT * FROM hotels WHERE city = ?", [city]
    if min_stars is not None:
        sql, params = sql + " AND stars >= ?", params + [min_stars]
    return db.all(sql + " ORDER BY nightly_rate, hotel_id", params)


@tool(produces=("reservation_id", "passenger_id", "hotel_id"), phrase="look up {reservation_id}")
def get_reservation(db: Db, reservation_id: str) -> dict:
    """Get a hotel reservation with the hotel's name, city and the stay's total price.

    Args:
        reservation_id: The reservation id, e.g. "RS-8001".
    """
    r = db.get("reservations", reservation_id, "Reservation")
    h = db.get("hotels", r["hotel_id"], "Hotel")
    return {**r, "hotel_name": h["name"], "city": h["city"], "total_price": round(h["nightly_rate"] * r["nights"], 2)}


@tool(mode=WRITE, produces=("booking_id", "passenger_id", "flight_id"), phrase="book {passenger_id} on {flight_id} in {cabin}")
def book_flight(db: Db, passenger_id: str, flight_id: str, cabin: Literal["economy", "business"]) -> dict:
    """Book a seat on a flight for a passenger, paying the current fare.

    Args:
        passenger_id: The passenger id.
        flight_id: The flight id.
        cabin: The cabin to fly in.
    """
    db.get("passengers", passenger_id, "Passenger")
    flight = db.get("flights", flight_id, "Flight")
    _bookable(db, flight, cabin)
    if db.value("SELECT COUNT(*) FROM bookings WHERE passenger_id = ? AND flight_id = ? AND status = 'confirmed'", (passenger_id, flight_id)):
        raise ToolError(f"Passenger {passenger_id} already has a confirmed booking on flight {flight_id}.")
    booking_id = db.next_id("bookings", "BK-", 4001)
    fare = flight[f"fare_{cabin}"]
    db.insert("bookings", {"booking_id": booking_id, "passenger_id": passenger_id, "flight_id": flight_id, "cabin": cabin,
                           "bags": 0, "fare_paid": fare, "status": "confirmed", "booked": db.now[:10]})
    db.update("flights", flight_id, **{f"seats_{cabin}": flight[f"seats_{cabin}"] - 1})
    return {"booking_id": booking_id, "passenger_id": passenger_id, "flight_id": flight_id, "cabin": cabin, "fare_paid": fare,
            "status": "confirmed"}


@tool(mode=WRITE, produces=("booking_id", "flight_id"), phrase="move {booking_id} to {new_flight_id}")
def change_flight(db: Db, booking_id: str, new_flight_id: str) -> dict:
    """Move a confirmed booking to another flight on the same route, in the same cabin.

    Args:
        booking_id: The booking id.
        new_flight_id: The flight to move to.
    """
    booking, old = _confirmed_booking(db, booking_id)
    new = db.get("flights", new_flight_id, "Flight")
    if new_flight_id == old["flight_id"]:
        raise ToolError(f"Booking {booking_id} is already on flight {new_flight_id}.")
    if (new["origin"], new["destination"]) != (old["origin"], old["destination"]):
        raise ToolError(f"Flight {new_flight_id} flies {new['origin']}-{new['destination']}, not the booked route "
                        f"{old['origin']}-{old['destination']}.")
    cabin = booking["cabin"]
    _bookable(db, new, cabin)
    difference = max(0.0, new[f"fare_{cabin}"] - booking["fare_paid"])
    charged = round(CHANGE_FEE[cabin] + difference, 2)
    db.update("flights", old["flight_id"], **{f"seats_{cabin}": old[f"seats_{cabin}"] + 1})
    db.update("flights", new_flight_id, **{f"seats_{cabin}": new[f"seats_{cabin}"] - 1})
    db.update("bookings", booking_id, flight_id=new_flight_id, fare_paid=round(booking["fare_paid"] + difference, 2))
    return {"booking_id": booking_id, "flight_id": new_flight_id, "change_fee": CHANGE_FEE[cabin], "charged": charged}


@tool(mode=WRITE, produces=("booking_id",), phrase="cancel {booking_id}")
def cancel_booking(db: Db, booking_id: str) -> dict:
    """Cancel a confirmed booking before departure and release its seat.

    Args:
        booking_id: The booking id.
    """
    booking, flight = _confirmed_booking(db, booking_id)
    cabin = booking["cabin"]
    refund = 0.0 if _hours_until(db, flight) < 24 else max(0.0, round(booking["fare_paid"] - CANCEL_FEE[cabin], 2))
    db.update("bookings", booking_id, status="cancelled")
    db.update("flights", flight["flight_id"], **{f"seats_{cabin}": flight[f"seats_{cabin}"] + 1})
    return {"booking_id": booking_id, "status": "cancelled", "refund": refund}


@tool(mode=WRITE, produces=("booking_id",), phrase="increase the checked bags on {booking_id} by {bags}", examples={"bags": [1, 2]})
def add_bags(db: Db, booking_id: str, bags: int) -> dict:
    """Add checked bags to a confirmed booking; bags beyond the free allowance are charged.

    Args:
        booking_id: The booking id.
        bags: How many bags to add, at least 1.
    """
    if bags < 1:
        raise ToolError(f"Add at least one bag, got {bags}.")
    booking, _ = _confirmed_booking(db, booking_id)
    total = booking["bags"] + bags
    if total > MAX_BAGS:
        raise ToolError(f"Booking {booking_id} would have {total} bags; the limit is {MAX_BAGS}.")
    tier = db.get("passengers", booking["passenger_id"])["tier"]
    free = FREE_BAGS[booking["cabin"]] + (1 if tier == "gold" else 0)
    fee = round(BAG_FEE * (max(0, total - free) - max(0, booking["bags"] - free)), 2)
    db.update("bookings", booking_id, bags=total)
    return {"booking_id": booking_id, "bags": total, "free_allowance": free, "fee": fee}


@tool(mode=WRITE, produces=("reservation_id", "passenger_id", "hotel_id"),
      phrase="reserve a room at {hotel_id} for {passenger_id} checking in on {check_in} for {nights} nights",
      examples={"check_in": ["2025-06-05", "2025-06-12", "2025-06-20", "2025-07-01"], "nights": [2, 3, 4, 5]})
def reserve_hotel(db: Db, passenger_id: str, hotel_id: str, check_in: str, nights: int) -> dict:
    """Reserve one hotel room for a passenger.

    Args:
        passenger_id: The passenger id.
        hotel_id: The hotel id.
        check_in: The check-in date (YYYY-MM-DD).
        nights: Number of nights, 1 to 14.
    """
    db.get("passengers", passenger_id, "Passenger")
    hotel = db.get("hotels", hotel_id, "Hotel")
    try:
        day = datetime.fromisoformat(check_in).date().isoformat()
    except ValueError:
        raise ToolError(f"check_in must be a date like 2025-06-15, got {check_in!r}.") from None
    if day < db.now[:10]:
        raise ToolError(f"Check-in {day} is in the past.")
    if not 1 <= nights <= MAX_NIGHTS:
        raise ToolError(f"nights must be between 1 and {MAX_NIGHTS}, got {nights}.")
    if hotel["rooms_free"] < 1:
        raise ToolError(f"Hotel {hotel_id} has no free rooms.")
    reservation_id = db.next_id("reservations", "RS-", 8001)
    db.insert("reservations", {"reservation_id": reservation_id, "passenger_id": passenger_id, "hotel_id": hotel_id,
                               "check_in": day, "nights": nights, "status": "confirmed"})
    db.update("hotels", hotel_id, rooms_free=hotel["rooms_free"] - 1)
    return {"reservation_id": reservation_id, "passenger_id": passenger_id, "hotel_id": hotel_id, "status": "confirmed",
            "total_price": round(hotel["nightly_rate"] * nights, 2)}


@tool(mode=WRITE, produces=("reservation_id",), phrase="cancel {reservation_id}")
def cancel_reservation(db: Db, reservation_id: str) -> dict:
    """Cancel a confirmed hotel reservation before its check-in day.

    Args:
        reservation_id: The reservation id.
    """
    r = db.get("reservations", reservation_id, "Reservation")
    if r["status"] != "confirmed":
        raise ToolError(f"Reservation {reservation_id} is {r['status']}.")
    if r["check_in"] <= db.now[:10]:
        raise ToolError(f"Reservation {reservation_id} checks in on {r['check_in']}; it can no longer be cancelled.")
    db.update("reservations", reservation_id, status="cancelled")
    db.execute("UPDATE hotels SET rooms_free = rooms_free + 1 WHERE hotel_id = ?", (r["hotel_id"],))
    return {"reservation_id": reservation_id, "status": "cancelled"}


THEME = Theme(SPEC, [find_passenger_by_email, get_passenger, list_bookings, get_booking, search_flights, get_flight,
                     search_hotels, get_reservation, book_flight, change_flight, cancel_booking, add_bags, reserve_hotel,
                     cancel_reservation])
