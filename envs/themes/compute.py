"""compute: a statistics workbench: datasets of measured series, their observations, saved computations and unit conversions.

Every statistic is computed with SQL over the stored observations (flagged ones are left out).
"""

from __future__ import annotations

import math
from typing import Literal

from agentworld_gym.theme import Theme
from agentworld_gym.tools import WRITE, Db, ToolError, tool
from agentworld_gym.world import Table, ThemeSpec, choice_col, date_col, faker_col, fk_col, id_col, money_col

# unit -> (quantity, scale, offset): base = value * scale + offset (bases: kelvin, kilogram, meter, second)
UNITS = {
    "celsius": ("temperature", 1.0, 273.15), "fahrenheit": ("temperature", 5 / 9, 273.15 - 160 / 9), "kelvin": ("temperature", 1.0, 0.0),
    "kilogram": ("mass", 1.0, 0.0), "gram": ("mass", 0.001, 0.0), "pound": ("mass", 0.45359237, 0.0),
    "meter": ("length", 1.0, 0.0), "kilometer": ("length", 1000.0, 0.0), "mile": ("length", 1609.344, 0.0),
    "second": ("time", 1.0, 0.0), "minute": ("time", 60.0, 0.0), "hour": ("time", 3600.0, 0.0),
}
Unit = Literal["celsius", "fahrenheit", "kelvin", "kilogram", "gram", "pound", "meter", "kilometer", "mile", "second", "minute", "hour"]
Statistic = Literal["mean", "median", "sum", "min", "max", "count", "stdev"]
STATISTICS = ["mean", "median", "sum", "min", "max", "count", "stdev"]
OK = "quality = 'ok'"

SPEC = ThemeSpec(
    id="compute",
    title="Tally Workbench",
    category="Mathematics & Computation",
    subcategory="Arithmetic & General Calculation",
    label="statistics workbench",
    description="You help analysts compute statistics over their measured series, keep the data clean and convert units.",
    tables=(
        Table("datasets", (
            id_col("dataset_id", "DS-", 101), faker_col("name", "slug", unique=True), faker_col("owner", "name"),
            choice_col("domain", ["weather", "logistics", "health", "manufacturing", "sports"]),
            choice_col("access", ["editable", "locked"], [0.75, 0.25]), date_col("created_date", "2024-01-01", "2025-04-30"),
        ), rows=10),
        Table("series", (
            id_col("series_id", "SE-"), fk_col("dataset_id", "datasets"),
            faker_col("code", ("bothify", "???-##", "ABCDEFGHIJKLMNOPQRSTUVWXYZ"), unique=True), choice_col("unit", list(UNITS)),
        ), rows=36),
        Table("observations", (
            id_col("observation_id", "OB-", 5001), fk_col("series_id", "series"), money_col("value", 0, 500),
            date_col("observed_date", "2025-01-01", "2025-05-31"), choice_col("quality", ["ok", "flagged"], [0.94, 0.06]),
        ), rows=500),
        Table("computations", (
            id_col("computation_id", "CP-", 8001), fk_col("series_id", "series"), choice_col("statistic", STATISTICS),
            money_col("result", 0, 5_000), date_col("computed_date", "2025-04-01", "2025-05-31"),
        ), rows=30),
        Table("conversions", (
            id_col("conversion_id", "CV-", 9001), fk_col("series_id", "series"),
            choice_col("conversion", ["celsius to fahrenheit", "kilogram to pound", "meter to kilometer", "minute to second", "mile to meter"]),
            date_col("converted_date", "2025-01-01", "2025-05-31"),
        ), rows=12),
    ),
    rules=(
        "Statistics use only observations whose quality is ok; flagged observations are left out.",
        "The median of an even number of values is the mean of the two middle ones; percentiles use the nearest-rank method "
        "(the value at rank ceil(p/100 x n) in ascending order); stdev is the sample standard deviation.",
        "Units convert only within one quantity: temperature (celsius, fahrenheit, kelvin), mass (kilogram, gram, pound), "
        "length (meter, kilometer, mile) and time (second, minute, hour).",
        "Locked datasets are read-only: their series cannot get new observations, flags or unit conversions.",
        "New observations cannot be dated after today.",
    ),
)


def _series(db: Db, series_id: str) -> dict:
    return db.get("series", series_id, "Series")


def _editable_series(db: Db, series_id: str) -> dict:
    series = _series(db, series_id)
    access = db.value("SELECT access FROM datasets WHERE dataset_id = ?", (series["dataset_id"],))
    if access == "locked":
        raise ToolError(f"Dataset {series['dataset_id']} is locked; series {series_id} is read-only.")
    return series


def _convert(value: float, from_unit: str, to_unit: str) -> float:
    q1, s1, o1 = UNITS[from_unit]
    q2, s2, o2 = UNITS[to_unit]
    if q1 != q2:
        raise ToolError(f"Cannot convert {from_unit} ({q1}) to {to_unit} ({q2}); units convert only within one quantity.")
    return (value * s1 + o1 - o2) / s2


def _statistic(db: Db, series_id: str, statistic: str) -> tuple[float, int]:
    """(value, n) of one statistic over a series' ok observations, computed in SQL."""
    n = db.value(f"SELECT COUNT(*) FROM observations WHERE series_id = ? AND {OK}", (series_id,))
    if statistic == "count":
        return n, n
    if n == 0:
        raise ToolError(f"Series {series_id} has no usable observations.")
    if statistic in ("mean", "sum", "min", "max"):
        fn = {"mean": "AVG", "sum": "SUM", "min": "MIN", "max": "MAX"}[statistic]
        value = db.value(f"SELECT {fn}(value) FROM observations WHERE series_id = ? AND {OK}", (series_id,))
    elif statistic == "median":
        value = db.value(f"SELECT AVG(value) FROM (SELECT value FROM observations WHERE series_id = ? AND {OK} "
                         "ORDER BY value LIMIT ? OFFSET ?)", (series_id, 2 - n % 2, (n - 1) // 2))
    else:  # stdev
        if n < 2:
            raise ToolError(f"Series {series_id} needs at least 2 usable observations for a standard deviation.")
        ss = db.value(f"SELECT SUM((value - m) * (value - m)) FROM observations, (SELECT AVG(value) AS m FROM observations "
                      f"WHERE series_id = ? AND {OK}) WHERE series_id = ? AND {OK}", (series_id, series_id))
        value = math.sqrt(ss / (n - 1))
    return round(value, 4), n


@tool(produces=("dataset_id",), phrase="look up {dataset_id}")
def get_dataset(db: Db, dataset_id: str) -> dict:
    """Get a dataset's name, owner, domain, access and number of series.

    Args:
        dataset_id: The dataset id, e.g. "DS-101".
    """
    ds = db.get("datasets", dataset_id, "Dataset")
    ds["series_count"] = db.value("SELECT COUNT(*) FROM series WHERE dataset_id = ?", (dataset_id,))
    return ds


@tool(produces=("series_id", "dataset_id"), phrase="list the series in {dataset_id}")
def list_series(db: Db, dataset_id: str) -> list:
    """List the series of a dataset.

    Args:
        dataset_id: The dataset id.
    """
    db.get("datasets", dataset_id, "Dataset")
    return db.all("SELECT * FROM series WHERE dataset_id = ? ORDER BY series_id", (dataset_id,))


@tool(produces=("series_id", "dataset_id"), phrase="look up {series_id}")
def get_series(db: Db, series_id: str) -> dict:
    """Get a series' code, unit and dataset, with its numbers of usable and flagged observations.

    Args:
        series_id: The series id, e.g. "SE-1001".
    """
    series = _series(db, series_id)
    series["usable_observations"] = db.value(f"SELECT COUNT(*) FROM observations WHERE series_id = ? AND {OK}", (series_id,))
    series["flagged_observations"] = db.value("SELECT COUNT(*) FROM observations WHERE series_id = ? AND quality = 'flagged'", (series_id,))
    return series


@tool(produces=("series_id", "dataset_id"), phrase="find the series with the code {code}")
def find_series(db: Db, code: str) -> dict:
    """Find a series by its code.

    Args:
        code: The series code, e.g. "QXT-42".
    """
    row = db.one("SELECT * FROM series WHERE upper(code) = upper(?) ORDER BY series_id LIMIT 1", (code.strip(),))
    if row is None:
        raise ToolError(f"No series with code {code!r}.")
    return row


@tool(produces=("observation_id", "series_id"), phrase="list the {quality} observations of {series_id}")
def list_observations(db: Db, series_id: str, quality: Literal["ok", "flagged"] | None = None) -> list:
    """List a series' observations in date order, optionally only those of one quality.

    Args:
        series_id: The series id.
        quality: Only observations of this quality.
    """
    _series(db, series_id)
    sql, params = "SELECT * FROM observations WHERE series_id = ?", [series_id]
    if quality:
        sql, params = sql + " AND quality = ?", params + [quality]
    return db.all(sql + " ORDER BY observed_date, observation_id", params)


@tool(produces=("series_id",), phrase="compute the {statistic} of {series_id}")
def compute_statistic(db: Db, series_id: str, statistic: Statistic) -> dict:
    """Compute one statistic over a series' usable observations, in the series' unit.

    Args:
        series_id: The series id.
        statistic: The statistic to compute.
    """
    series = _series(db, series_id)
    value, n = _statistic(db, series_id, statistic)
    return {"series_id": series_id, "statistic": statistic, "value": value, "unit": series["unit"], "sample_size": n}


@tool(produces=("series_id",), phrase="compute the {percentile}th percentile of {series_id}",
      examples={"percentile": [10, 25, 50, 75, 90, 95]})
def compute_percentile(db: Db, series_id: str, percentile: int) -> dict:
    """Compute a percentile (nearest rank) of a series' usable observations.

    Args:
        series_id: The series id.
        percentile: The percentile, 1 to 100.
    """
    series = _series(db, series_id)
    if not 1 <= percentile <= 100:
        raise ToolError(f"The percentile must be between 1 and 100, got {percentile}.")
    n = db.value(f"SELECT COUNT(*) FROM observations WHERE series_id = ? AND {OK}", (series_id,))
    if n == 0:
        raise ToolError(f"Series {series_id} has no usable observations.")
    rank = max(1, math.ceil(percentile / 100 * n))
    value = db.value(f"SELECT value FROM observations WHERE series_id = ? AND {OK} ORDER BY value LIMIT 1 OFFSET ?", (series_id, rank - 1))
    return {"series_id": series_id, "percentile": percentile, "value": value, "unit": series["unit"], "rank": rank, "sample_size": n}


@tool(produces=("observation_id", "series_id"), phrase="express {observation_id} in {to_unit}")
def convert_observation(db: Db, observation_id: str, to_unit: Unit) -> dict:
    """Convert one observation's value to another unit of the same quantity (nothing is stored).

    Args:
        observation_id: The observation id.
        to_unit: The unit to express the value in.
    """
    obs = db.get("observations", observation_id, "Observation")
    unit = db.value("SELECT unit FROM series WHERE series_id = ?", (obs["series_id"],))
    return {"observation_id": observation_id, "series_id": obs["series_id"], "original": f"{obs['value']} {unit}",
            "converted_value": round(_convert(obs["value"], unit, to_unit), 4), "unit": to_unit}


@tool(produces=("computation_id", "series_id"), phrase="check {computation_id}")
def get_computation(db: Db, computation_id: str) -> dict:
    """Get a saved computation and whether its stored result still matches the data.

    Args:
        computation_id: The computation id, e.g. "CP-8001".
    """
    comp = db.get("computations", computation_id, "Computation")
    try:
        current, _ = _statistic(db, comp["series_id"], comp["statistic"])
    except ToolError:
        current = None
    comp["current_result"] = current
    comp["freshness"] = "up to date" if current is not None and abs(current - comp["result"]) < 0.005 else "stale"
    return comp


@tool(mode=WRITE, produces=("observation_id", "series_id"), phrase="record the value {value} on {observed_date} in {series_id}",
      examples={"value": [12.5, 40.0, 101.25, 250.0, 7.75], "observed_date": ["2025-05-30", "2025-05-31", "2025-06-01"]})
def add_observation(db: Db, series_id: str, value: float, observed_date: str) -> dict:
    """Add an observation to a series of an editable dataset.

    Args:
        series_id: The series id.
        value: The measured value, in the series' unit.
        observed_date: The date of the measurement (YYYY-MM-DD), not after today.
    """
    series = _editable_series(db, series_id)
    if not math.isfinite(value):
        raise ToolError(f"The value must be a finite number, got {value}.")
    if len(observed_date) != 10 or observed_date[4] != "-" or observed_date[7] != "-":
        raise ToolError(f"The date must look like YYYY-MM-DD, got {observed_date!r}.")
    if observed_date > db.now[:10]:
        raise ToolError(f"Observations cannot be dated after today ({db.now[:10]}), got {observed_date}.")
    observation_id = db.next_id("observations", "OB-", 5001)
    db.insert("observations", {"observation_id": observation_id, "series_id": series_id, "value": round(value, 4),
                               "observed_date": observed_date, "quality": "ok"})
    mean, n = _statistic(db, series_id, "mean")
    return {"observation_id": observation_id, "series_id": series_id, "unit": series["unit"], "new_mean": mean, "sample_size": n}


@tool(mode=WRITE, produces=("observation_id", "series_id"), phrase="flag {observation_id} as bad data")
def flag_observation(db: Db, observation_id: str) -> dict:
    """Flag an observation so that statistics leave it out.

    Args:
        observation_id: The observation id.
    """
    obs = db.get("observations", observation_id, "Observation")
    _editable_series(db, obs["series_id"])
    if obs["quality"] == "flagged":
        raise ToolError(f"Observation {observation_id} is already flagged.")
    db.update("observations", observation_id, quality="flagged")
    n = db.value(f"SELECT COUNT(*) FROM observations WHERE series_id = ? AND {OK}", (obs["series_id"],))
    return {"observation_id": observation_id, "series_id": obs["series_id"], "quality": "flagged", "usable_observations": n}


@tool(mode=WRITE, produces=("series_id", "conversion_id"), phrase="convert {series_id} to {to_unit}")
def convert_series(db: Db, series_id: str, to_unit: Unit) -> dict:
    """Convert every observation of a series to another unit of the same quantity, and log the conversion.

    Args:
        series_id: The series id.
        to_unit: The new unit.
    """
    series = _editable_series(db, series_id)
    if series["unit"] == to_unit:
        raise ToolError(f"Series {series_id} is already in {to_unit}.")
    _convert(0.0, series["unit"], to_unit)  # refuses a unit of another quantity
    rows = db.all("SELECT observation_id, value FROM observations WHERE series_id = ? ORDER BY observation_id", (series_id,))
    for r in rows:
        db.update("observations", r["observation_id"], value=round(_convert(r["value"], series["unit"], to_unit), 4))
    db.update("series", series_id, unit=to_unit)
    conversion_id = db.next_id("conversions", "CV-", 9001)
    db.insert("conversions", {"conversion_id": conversion_id, "series_id": series_id, "conversion": f"{series['unit']} to {to_unit}",
                              "converted_date": db.now[:10]})
    return {"series_id": series_id, "conversion_id": conversion_id, "from_unit": series["unit"], "unit": to_unit, "observations_converted": len(rows)}


@tool(mode=WRITE, produces=("computation_id", "series_id"), phrase="save the {statistic} of {series_id}")
def save_computation(db: Db, series_id: str, statistic: Statistic) -> dict:
    """Save (or refresh) a series' statistic; there is one saved computation per series and statistic.

    Args:
        series_id: The series id.
        statistic: The statistic to save.
    """
    _series(db, series_id)
    value, n = _statistic(db, series_id, statistic)
    existing = db.one("SELECT * FROM computations WHERE series_id = ? AND statistic = ? ORDER BY computation_id LIMIT 1", (series_id, statistic))
    if existing and abs(existing["result"] - value) < 0.005:
        raise ToolError(f"The {statistic} of series {series_id} is already saved and up to date ({existing['computation_id']}).")
    if existing:
        computation_id = existing["computation_id"]
        db.update("computations", computation_id, result=value, computed_date=db.now[:10])
    else:
        computation_id = db.next_id("computations", "CP-", 8001)
        db.insert("computations", {"computation_id": computation_id, "series_id": series_id, "statistic": statistic,
                                   "result": value, "computed_date": db.now[:10]})
    return {"computation_id": computation_id, "series_id": series_id, "statistic": statistic, "result": value,
            "action": "refreshed" if existing else "created", "sample_size": n}


THEME = Theme(SPEC, [get_dataset, list_series, get_series, find_series, list_observations, compute_statistic, compute_percentile,
                     convert_observation, get_computation, add_observation, flag_observation, convert_series, save_computation])
