"""weather: a regional weather service's stations, observations, forecasts, alerts and alert subscriptions."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Literal

from agentworld_gym.theme import Theme
from agentworld_gym.tools import WRITE, Db, ToolError, tool
from agentworld_gym.world import Column, Table, ThemeSpec, choice_col, date_col, faker_col, fk_col, id_col, int_col, money_col

REGIONS = ("Pacific Coast", "Great Plains", "Gulf Coast", "New England", "Rockies")
CONDITIONS = ("clear", "cloudy", "rain", "thunderstorm", "fog", "snow")
ALERT_KINDS = ("heat", "flood", "high wind", "thunderstorm", "frost")
SEVERITIES = ("minor", "moderate", "severe", "extreme")  # in rising order
MAX_ALERT_DAYS = 7
LIMITS = {"temperature_c": (-60.0, 60.0), "humidity": (0, 100), "wind_kph": (0.0, 400.0), "precipitation_mm": (0.0, 500.0)}

SPEC = ThemeSpec(
    id="weather",
    title="Skywatch Weather Service",
    category="Weather & Geospatial",
    subcategory="Weather Forecasting",
    label="weather stations, forecasts and alerts",
    description="You help forecasters and the public with station readings, forecasts, weather alerts and alert subscriptions.",
    tables=(
        Table("stations", (
            id_col("station_id", "ST-", 101), Column("name", "faker", "city", unique=True), choice_col("region", REGIONS),
            int_col("elevation_m", 0, 2500), money_col("latitude", 25, 49), money_col("longitude", -124, -67),
            choice_col("status", ["active", "maintenance", "retired"], [0.8, 0.15, 0.05]), date_col("installed", "2005-01-01", "2024-12-31"),
        ), rows=30),
        Table("observations", (
            id_col("observation_id", "OB-", 10001), fk_col("station_id", "stations"), date_col("date", "2025-05-01", "2025-05-31"),
            choice_col("hour", ["06:00", "12:00", "18:00"]), money_col("temperature_c", -2, 34), int_col("humidity", 15, 100),
            money_col("wind_kph", 0, 70), money_col("precipitation_mm", 0, 40), choice_col("condition", CONDITIONS, [0.35, 0.3, 0.2, 0.05, 0.07, 0.03]),
        ), rows=300),
        Table("forecasts", (
            id_col("forecast_id", "FC-", 5001), fk_col("station_id", "stations"), date_col("date", "2025-06-01", "2025-06-07"),
            money_col("high_c", 18, 36), money_col("low_c", 2, 17), int_col("precip_chance", 0, 100), choice_col("condition", CONDITIONS),
        ), rows=120),
        Table("alerts", (
            id_col("alert_id", "AL-", 701), fk_col("station_id", "stations"), choice_col("kind", ALERT_KINDS),
            choice_col("severity", SEVERITIES, [0.4, 0.35, 0.2, 0.05]),
            choice_col("status", ["active", "expired", "cancelled"], [0.4, 0.45, 0.15]),
            date_col("issued", "2025-05-01", "2025-05-24"), date_col("expires", "2025-05-25", "2025-06-10"),
        ), rows=30),
        Table("subscribers", (
            id_col("subscriber_id", "SU-", 301), faker_col("name", "name"), faker_col("email", "email", unique=True),
            faker_col("phone", "phone_number"),
        ), rows=35),
        Table("subscriptions", (
            id_col("subscription_id", "SB-", 901), fk_col("subscriber_id", "subscribers"), fk_col("station_id", "stations"),
            choice_col("min_severity", SEVERITIES), choice_col("channel", ["email", "sms"], [0.6, 0.4]),
            choice_col("status", ["active", "paused"], [0.8, 0.2]),
        ), rows=60),
    ),
    rules=(
        "Observations can be recorded only at active stations, with physically possible values "
        "(temperature -60 to 60 C, humidity 0-100 %, wind and precipitation not negative).",
        f"Alerts can be issued only for active stations, lasting 1 to {MAX_ALERT_DAYS} days; "
        "a station cannot have two active alerts of the same kind.",
        "Only active alerts can be cancelled.",
        "Retired stations take no new subscriptions, and a subscriber can subscribe to a station only once.",
    ),
)


def _station(db: Db, station_id: str, active: bool = False) -> dict:
    station = db.get("stations", station_id, "Station")
    if active and station["status"] != "active":
        raise ToolError(f"Station {station_id} is {station['status']}; only active stations can do this.")
    return station


def _rank(severity: str) -> int:
    return SEVERITIES.index(severity)


@tool(produces=("station_id",), phrase="list the {status} weather stations in the {region} region")
def list_stations(db: Db, region: Literal[REGIONS], status: Literal["active", "maintenance", "retired"] | None = None) -> list:
    """List the weather stations of a region.

    Args:
        region: The region.
        status: Only stations with this status.
    """
    sql, params = "SELECT * FROM stations WHERE region = ?", [region]
    if status:
        sql, params = sql + " AND status = ?", params + [status]
    return db.all(sql + " ORDER BY name, station_id", params)


@tool(produces=("station_id",), phrase="look up {station_id}")
def get_station(db: Db, station_id: str) -> dict:
    """Get a station's details and its latest observation.

    Args:
        station_id: The station id, e.g. "ST-101".
    """
    station = _station(db, station_id)
    latest = db.one("SELECT date, hour, temperature_c, condition FROM observations WHERE station_id = ? "
                    "ORDER BY date DESC, hour DESC, observation_id DESC LIMIT 1", (station_id,))
    extra = {f"latest_{k}": v for k, v in latest.items()} if latest else {"latest_date": None}
    return {**station, **extra}


@tool(produces=("observation_id", "station_id"), phrase="list the {condition} observations recorded at {station_id}")
def list_observations(db: Db, station_id: str, condition: Literal[CONDITIONS] | None = None) -> list:
    """List a station's observations, oldest first.

    Args:
        station_id: The station id.
        condition: Only observations with this sky condition.
    """
    _station(db, station_id)
    sql, params = "SELECT * FROM observations WHERE station_id = ?", [station_id]
    if condition:
        sql, params = sql + " AND condition = ?", params + [condition]
    return db.all(sql + " ORDER BY date, hour, observation_id", params)


@tool(produces=("station_id",), phrase="summarise the readings of {station_id}")
def station_summary(db: Db, station_id: str) -> dict:
    """Summary of all of a station's observations: counts, temperatures, total rain.

    Args:
        station_id: The station id.
    """
    _station(db, station_id)
    row = db.one(
        "SELECT COUNT(*) AS readings, ROUND(AVG(temperature_c), 2) AS average_temperature_c, MAX(temperature_c) AS highest_temperature_c, "
        "MIN(temperature_c) AS lowest_temperature_c, ROUND(COALESCE(SUM(precipitation_mm), 0), 2) AS total_precipitation_mm, "
        "COUNT(DISTINCT CASE WHEN condition IN ('rain', 'thunderstorm') THEN date END) AS wet_days "
        "FROM observations WHERE station_id = ?", (station_id,))
    return {"station_id": station_id, **row}


@tool(produces=("forecast_id", "station_id"), phrase="get the forecast for {station_id}")
def get_forecast(db: Db, station_id: str, date: str | None = None) -> list:
    """The forecast days for a station (or just one date), in date order.

    Args:
        station_id: The station id.
        date: Only this date (YYYY-MM-DD).
    """
    _station(db, station_id)
    sql, params = "SELECT * FROM forecasts WHERE station_id = ?", [station_id]
    if date:
        sql, params = sql + " AND date = ?", params + [date]
    return db.all(sql + " ORDER BY date, forecast_id", params)


@tool(produces=("alert_id", "station_id"), phrase="list the {status} weather alerts for {station_id}")
def list_alerts(db: Db, station_id: str, status: Literal["active", "expired", "cancelled"] | None = None) -> list:
    """List a station's weather alerts, newest first.

    Args:
        station_id: The station id.
        status: Only alerts with this status.
    """
    _station(db, station_id)
    sql, params = "SELECT * FROM alerts WHERE station_id = ?", [station_id]
    if status:
        sql, params = sql + " AND status = ?", params + [status]
    return db.all(sql + " ORDER BY issued DESC, alert_id DESC", params)


@tool(produces=("alert_id", "station_id"), phrase="look up {alert_id}")
def get_alert(db: Db, alert_id: str) -> dict:
    """Get an alert, its station's name and how many active subscriptions it reaches.

    Args:
        alert_id: The alert id, e.g. "AL-701".
    """
    alert = db.get("alerts", alert_id, "Alert")
    station = db.get("stations", alert["station_id"])
    subs = db.all("SELECT min_severity FROM subscriptions WHERE station_id = ? AND status = 'active' ORDER BY subscription_id",
                  (alert["station_id"],))
    reached = sum(1 for s in subs if _rank(s["min_severity"]) <= _rank(alert["severity"]))
    return {**alert, "station_name": station["name"], "subscribers_reached": reached}


@tool(produces=("subscriber_id",), phrase="find the subscriber whose email is {email}")
def find_subscriber_by_email(db: Db, email: str) -> dict:
    """Find an alert subscriber by email address.

    Args:
        email: The subscriber's email address.
    """
    row = db.one("SELECT * FROM subscribers WHERE lower(email) = lower(?)", (email.strip(),))
    if row is None:
        raise ToolError(f"No subscriber with email {email!r}.")
    return row


@tool(produces=("subscription_id", "subscriber_id", "station_id"), phrase="list the alert subscriptions of {subscriber_id}")
def list_subscriptions(db: Db, subscriber_id: str) -> list:
    """List a subscriber's alert subscriptions with each station's name.

    Args:
        subscriber_id: The subscriber id, e.g. "SU-301".
    """
    db.get("subscribers", subscriber_id, "Subscriber")
    return db.all("SELECT s.*, st.name AS station_name FROM subscriptions s JOIN stations st ON st.station_id = s.station_id "
                  "WHERE s.subscriber_id = ? ORDER BY s.subscription_id", (subscriber_id,))


@tool(mode=WRITE, produces=("observation_id", "station_id"),
      phrase="record a {condition} reading at {station_id}: {temperature_c} C, {humidity}% humidity, wind {wind_kph} km/h, "
             "{precipitation_mm} mm of rain",
      examples={"temperature_c": [4.5, 12.0, 18.3, 24.8, 31.2], "humidity": [35, 55, 72, 90], "wind_kph": [0.0, 8.5, 22.0, 41.0],
                "precipitation_mm": [0.0, 1.2, 6.5, 18.0]})
def record_observation(db: Db, station_id: str, temperature_c: float, humidity: int, wind_kph: float, precipitation_mm: float,
                       condition: Literal[CONDITIONS]) -> dict:
    """Record a new observation at an active station, timestamped now.

    Args:
        station_id: The station id.
        temperature_c: Air temperature in degrees Celsius.
        humidity: Relative humidity in percent.
        wind_kph: Wind speed in km/h.
        precipitation_mm: Precipitation since the last reading, in mm.
        condition: The sky condition.
    """
    _station(db, station_id, active=True)
    values = {"temperature_c": temperature_c, "humidity": humidity, "wind_kph": wind_kph, "precipitation_mm": precipitation_mm}
    for name, v in values.items():
        lo, hi = LIMITS[name]
        if not lo <= v <= hi:
            raise ToolError(f"{name.replace('_', ' ')} must be between {lo:g} and {hi:g}, got {v}.")
    observation_id = db.next_id("observations", "OB-", 10001)
    db.insert("observations", {"observation_id": observation_id, "station_id": station_id, "date": db.now[:10], "hour": db.now[11:16],
                               **values, "condition": condition})
    return {"observation_id": observation_id, "station_id": station_id, "date": db.now[:10], "hour": db.now[11:16]}


@tool(mode=WRITE, produces=("alert_id", "station_id"), phrase="issue a {severity} {kind} alert for {station_id} lasting {days} days",
      examples={"days": [1, 2, 3, 5]})
def issue_alert(db: Db, station_id: str, kind: Literal[ALERT_KINDS], severity: Literal[SEVERITIES], days: int) -> dict:
    """Issue a weather alert for an active station, starting today.

    Args:
        station_id: The station id.
        kind: The hazard.
        severity: How severe it is.
        days: How many days it lasts, 1 to 7.
    """
    _station(db, station_id, active=True)
    if not 1 <= days <= MAX_ALERT_DAYS:
        raise ToolError(f"days must be between 1 and {MAX_ALERT_DAYS}, got {days}.")
    if db.value("SELECT COUNT(*) FROM alerts WHERE station_id = ? AND kind = ? AND status = 'active'", (station_id, kind)):
        raise ToolError(f"Station {station_id} already has an active {kind} alert; cancel it first.")
    alert_id = db.next_id("alerts", "AL-", 701)
    today = date.fromisoformat(db.now[:10])
    expires = (today + timedelta(days=days)).isoformat()
    db.insert("alerts", {"alert_id": alert_id, "station_id": station_id, "kind": kind, "severity": severity, "status": "active",
                         "issued": today.isoformat(), "expires": expires})
    return {"alert_id": alert_id, "station_id": station_id, "status": "active", "expires": expires}


@tool(mode=WRITE, produces=("alert_id",), phrase="cancel {alert_id}")
def cancel_alert(db: Db, alert_id: str) -> dict:
    """Cancel an active alert.

    Args:
        alert_id: The alert id.
    """
    alert = db.get("alerts", alert_id, "Alert")
    if alert["status"] != "active":
        raise ToolError(f"Alert {alert_id} is {alert['status']}; only active alerts can be cancelled.")
    db.update("alerts", alert_id, status="cancelled")
    return {"alert_id": alert_id, "status": "cancelled", "kind": alert["kind"]}


@tool(mode=WRITE, produces=("subscription_id", "subscriber_id", "station_id"),
      phrase="subscribe {subscriber_id} to {min_severity} or worse alerts from {station_id} by {channel}")
def subscribe_to_alerts(db: Db, subscriber_id: str, station_id: str, min_severity: Literal[SEVERITIES], channel: Literal["email", "sms"]) -> dict:
    """Subscribe someone to a station's alerts at or above a severity.

    Args:
        subscriber_id: The subscriber id.
        station_id: The station id.
        min_severity: The least severe alert to be told about.
        channel: How to send alerts.
    """
    db.get("subscribers", subscriber_id, "Subscriber")
    station = _station(db, station_id)
    if station["status"] == "retired":
        raise ToolError(f"Station {station_id} is retired and takes no new subscriptions.")
    if db.value("SELECT COUNT(*) FROM subscriptions WHERE subscriber_id = ? AND station_id = ?", (subscriber_id, station_id)):
        raise ToolError(f"Subscriber {subscriber_id} is already subscribed to station {station_id}.")
    subscription_id = db.next_id("subscriptions", "SB-", 901)
    db.insert("subscriptions", {"subscription_id": subscription_id, "subscriber_id": subscriber_id, "station_id": station_id,
                                "min_severity": min_severity, "channel": channel, "status": "active"})
    return {"subscription_id": subscription_id, "subscriber_id": subscriber_id, "station_id": station_id, "station_name": station["name"],
            "status": "active"}


@tool(mode=WRITE, produces=("subscription_id",), phrase="set {subscription_id} to {status}")
def set_subscription_status(db: Db, subscription_id: str, status: Literal["active", "paused"]) -> dict:
    """Pause or resume a subscription.

    Args:
        subscription_id: The subscription id.
        status: The new status.
    """
    sub = db.get("subscriptions", subscription_id, "Subscription")
    if sub["status"] == status:
        raise ToolError(f"Subscription {subscription_id} is already {status}.")
    if status == "active" and db.get("stations", sub["station_id"])["status"] == "retired":
        raise ToolError(f"Station {sub['station_id']} is retired; the subscription cannot be resumed.")
    db.update("subscriptions", subscription_id, status=status)
    return {"subscription_id": subscription_id, "status": status, "channel": sub["channel"]}


THEME = Theme(SPEC, [list_stations, get_station, list_observations, station_summary, get_forecast, list_alerts, get_alert,
                     find_subscriber_by_email, list_subscriptions, record_observation, issue_alert, cancel_alert, subscribe_to_alerts,
                     set_subscription_status])
