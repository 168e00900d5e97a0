"""clinic: a medical practice's patients, doctors, appointments, prescriptions and pharmacy refills."""

from __future__ import annotations

from datetime import date as Date
from datetime import datetime, timedelta
from typing import Literal

from agentworld_gym.theme import Theme
from agentworld_gym.tools import WRITE, Db, ToolError, tool
from agentworld_gym.world import Table, ThemeSpec, choice_col, date_col, faker_col, fk_col, id_col, int_col, money_col

SPECIALTIES = ("general practice", "cardiology", "dermatology", "pediatrics", "orthopedics", "neurology")
SLOTS = tuple(f"{h:02d}:{m:02d}" for h in range(9, 17) for m in (0, 30))  # 09:00 .. 16:30
REASONS = ("checkup", "follow-up visit", "consultation", "vaccination", "test review")
MEDICATIONS = ("atorvastatin", "lisinopril", "metformin", "amoxicillin", "levothyroxine", "sertraline", "omeprazole", "albuterol")
DOSES = ("5 mg once daily", "10 mg once daily", "20 mg twice daily", "250 mg three times daily", "1 puff as needed")
MIN_NOTICE_HOURS = 24
REFILL_GAP_DAYS = 7
FUTURE_WEEKDAYS = ["2025-06-02", "2025-06-03", "2025-06-04", "2025-06-05", "2025-06-06", "2025-06-09", "2025-06-10"]

SPEC = ThemeSpec(
    id="clinic",
    title="Maple Street Medical Practice",
    category="Healthcare & Life Sciences",
    subcategory="Clinical Medicine & Health",
    label="clinic appointments and prescriptions",
    description="You help patients and front-desk staff with appointments, doctors, prescriptions and refills.",
    tables=(
        Table("patients", (
            id_col("patient_id", "PT-"), faker_col("name", "name"), faker_col("email", "email", unique=True),
            date_col("born", "1940-01-01", "2020-12-31"), faker_col("phone", "phone_number"),
            choice_col("insurance", ["medicare", "bluecross", "aetna", "self-pay"], [0.3, 0.3, 0.25, 0.15]),
        ), rows=50),
        Table("doctors", (
            id_col("doctor_id", "DR-", 201), faker_col("name", "name"), choice_col("specialty", SPECIALTIES),
            money_col("fee", 80, 300), choice_col("status", ["active", "on leave"], [0.9, 0.1]),
        ), rows=14),
        Table("appointments", (
            id_col("appointment_id", "AP-", 3001), fk_col("patient_id", "patients"), fk_col("doctor_id", "doctors"),
            date_col("date", "2025-05-19", "2025-06-27"), choice_col("time", SLOTS), choice_col("reason", REASONS),
            choice_col("status", ["scheduled", "completed", "cancelled", "no-show"], [0.55, 0.3, 0.1, 0.05]),
        ), rows=120),
        Table("prescriptions", (
            id_col("prescription_id", "RX-", 5001), fk_col("patient_id", "patients"), fk_col("doctor_id", "doctors"),
            choice_col("medication", MEDICATIONS), choice_col("dose", DOSES), int_col("refills_left", 0, 3),
            choice_col("status", ["active", "expired"], [0.8, 0.2]), date_col("last_filled", "2025-04-01", "2025-05-31"),
        ), rows=60),
        Table("refills", (
            id_col("refill_id", "RF-", 7001), fk_col("prescription_id", "prescriptions"), date_col("date", "2025-01-01", "2025-05-31"),
            choice_col("pharmacy", ["Main Street Pharmacy", "CityCare Drugs", "Hillside Chemist"]),
        ), rows=40),
    ),
    rules=(
        "Appointments are on weekdays at half-hour slots from 09:00 to 16:30, in the future, with a doctor who is not on leave.",
        "Neither a doctor nor a patient can have two scheduled appointments at the same date and time.",
        f"A scheduled appointment can be cancelled or rescheduled only at least {MIN_NOTICE_HOURS} hours before it starts.",
        f"A prescription can be refilled only while active, with refills left, and not within {REFILL_GAP_DAYS} days of the last fill.",
    ),
)


def _start(day: str, time: str) -> datetime:
    return datetime.fromisoformat(f"{day}T{time}:00")


def _check_slot(db: Db, doctor_id: str, patient_id: str, day: str, time: str, ignore: str = "") -> None:
    """Raise unless (day, time) is a valid, free future slot for both the doctor and the patient."""
    try:
        when = _start(day, time)
    except ValueError:
        raise ToolError(f"Expected a date like 2025-06-03, got {day!r}.") from None
    if time not in SLOTS:
        raise ToolError(f"Appointments start on the half hour between 09:00 and 16:30, got {time!r}.")
    if when.weekday() >= 5:
        raise ToolError(f"{day} is a {when:%A}; the practice is open on weekdays only.")
    if when <= datetime.fromisoformat(db.now):
        raise ToolError(f"{day} {time} is in the past.")
    doctor = db.get("doctors", doctor_id, "Doctor")
    if doctor["status"] != "active":
        raise ToolError(f"Doctor {doctor_id} is {doctor['status']}.")
    busy = "SELECT COUNT(*) FROM appointments WHERE {} = ? AND date = ? AND time = ? AND status = 'scheduled' AND appointment_id != ?"
    if db.value(busy.format("doctor_id"), (doctor_id, day, time, ignore)):
        raise ToolError(f"Doctor {doctor_id} is already booked on {day} at {time}.")
    if db.value(busy.format("patient_id"), (patient_id, day, time, ignore)):
        raise ToolError(f"Patient {patient_id} already has an appointment on {day} at {time}.")


def _changeable(db: Db, appointment_id: str) -> dict:
    appt = db.get("appointments", appointment_id, "Appointment")
    if appt["status"] != "scheduled":
        raise ToolError(f"Appointment {appointment_id} is {appt['status']}; only scheduled appointments can change.")
    hours = (_start(appt["date"], appt["time"]) - datetime.fromisoformat(db.now)).total_seconds() / 3600
    if hours < MIN_NOTICE_HOURS:
        raise ToolError(f"Appointment {appointment_id} starts in {max(hours, 0):.0f} hours; changes need {MIN_NOTICE_HOURS} hours' notice.")
    return appt


@tool(produces=("patient_id",), phrase="find the patient whose email is {email}")
def find_patient_by_email(db: Db, email: str) -> dict:
    """Find a patient by their email address.

    Args:
        email: The patient's email address.
    """
    row = db.one("SELECT * FROM patients WHERE lower(email) = lower(?)", (email.strip(),))
    if row is None:
        raise ToolError(f"No patient with email {email!r}.")
    return row


@tool(produces=("patient_id",), phrase="look up the record of {patient_id}")
def get_patient(db: Db, patient_id: str) -> dict:
    """Get a patient's record with counts of upcoming appointments and active prescriptions.

    Args:
        patient_id: The patient id, e.g. "PT-1001".
    """
    p = db.get("patients", patient_id, "Patient")
    upcoming = db.value("SELECT COUNT(*) FROM appointments WHERE patient_id = ? AND status = 'scheduled' AND date >= ?",
                        (patient_id, db.now[:10]))
    active = db.value("SELECT COUNT(*) FROM prescriptions WHERE patient_id = ? AND status = 'active'", (patient_id,))
    return {**p, "upcoming_appointments": upcoming, "active_prescriptions": active}


@tool(produces=("appointment_id", "patient_id", "doctor_id"), phrase="list the {status} appointments of {patient_id}")
def list_appointments(db: Db, patient_id: str, status: Literal["scheduled", "completed", "cancelled", "no-show"] | None = None) -> list:
    """List a patient's appointments in date order.

    Args:
        patient_id: The patient id.
        status: Only appointments with this status.
    """
    db.get("patients", patient_id, "Patient")
    sql, params = "SELECT * FROM appointments WHERE patient_id = ?", [patient_id]
    if status:
        sql, params = sql + " AND status = ?", params + [status]
    return db.all(sql + " ORDER BY date, time, appointment_id", params)


@tool(produces=("appointment_id", "patient_id", "doctor_id"), phrase="look up {appointment_id}")
def get_appointment(db: Db, appointment_id: str) -> dict:
    """Get an appointment with the doctor's name and specialty.

    Args:
        appointment_id: The appointment id, e.g. "AP-3001".
    """
    appt = db.get("appointments", appointment_id, "Appointment")
    doc = db.get("doctors", appt["doctor_id"], "Doctor")
    return {**appt, "doctor_name": doc["name"], "specialty": doc["specialty"]}


@tool(produces=("doctor_id",), phrase="find the {specialty} doctors")
def find_doctors(db: Db, specialty: Literal[SPECIALTIES], include_on_leave: bool = False) -> list:
    """List the practice's doctors of one specialty.

    Args:
        specialty: The medical specialty.
        include_on_leave: Also list doctors who are on leave.
    """
    sql = "SELECT * FROM doctors WHERE specialty = ?" + ("" if include_on_leave else " AND status = 'active'")
    return db.all(sql + " ORDER BY name, doctor_id", (specialty,))


@tool(produces=("doctor_id",), phrase="check which slots {doctor_id} has free on {date}", examples={"date": FUTURE_WEEKDAYS})
def get_doctor_availability(db: Db, doctor_id: str, date: str) -> dict:
    """The half-hour slots a doctor still has free on one day.

    Args:
        doctor_id: The doctor id.
        date: The day (YYYY-MM-DD).
    """
    doctor = db.get("doctors", doctor_id, "Doctor")
    try:
        weekday = Date.fromisoformat(date).weekday()
    except ValueError:
        raise ToolError(f"Expected a date like 2025-06-03, got {date!r}.") from None
    taken = {r["time"] for r in db.all("SELECT time FROM appointments WHERE doctor_id = ? AND date = ? AND status = 'scheduled' ORDER BY time",
                                       (doctor_id, date))}
    free = [] if weekday >= 5 or doctor["status"] != "active" else [s for s in SLOTS if s not in taken]
    return {"doctor_id": doctor_id, "date": date, "doctor_status": doctor["status"], "free_count": len(free), "free_slots": free}


@tool(produces=("prescription_id", "patient_id"), phrase="list the {status} prescriptions of {patient_id}")
def list_prescriptions(db: Db, patient_id: str, status: Literal["active", "expired"] | None = None) -> list:
    """List a patient's prescriptions.

    Args:
        patient_id: The patient id.
        status: Only prescriptions with this status.
    """
    db.get("patients", patient_id, "Patient")
    sql, params = "SELECT * FROM prescriptions WHERE patient_id = ?", [patient_id]
    if status:
        sql, params = sql + " AND status = ?", params + [status]
    return db.all(sql + " ORDER BY prescription_id", params)


@tool(produces=("prescription_id", "patient_id", "doctor_id"), phrase="look up {prescription_id}")
def get_prescription(db: Db, prescription_id: str) -> dict:
    """Get a prescription with its refills left and how many times it was refilled.

    Args:
        prescription_id: The prescription id, e.g. "RX-5001".
    """
    rx = db.get("prescriptions", prescription_id, "Prescription")
    rx["times_refilled"] = db.value("SELECT COUNT(*) FROM refills WHERE prescription_id = ?", (prescription_id,))
    return rx


@tool(mode=WRITE, produces=("appointment_id", "patient_id", "doctor_id"),
      phrase="book {patient_id} in with {doctor_id} for a {reason} on {date} at {time}", examples={"date": FUTURE_WEEKDAYS})
def book_appointment(db: Db, patient_id: str, doctor_id: str, date: str, time: Literal[SLOTS], reason: Literal[REASONS]) -> dict:
    """Book an appointment for a patient with a doctor.

    Args:
        patient_id: The patient id.
        doctor_id: The doctor id.
        date: The day (YYYY-MM-DD), a weekday in the future.
        time: The start time, a half-hour slot.
        reason: Why the patient is coming.
    """
    db.get("patients", patient_id, "Patient")
    _check_slot(db, doctor_id, patient_id, date, time)
    appointment_id = db.next_id("appointments", "AP-", 3001)
    db.insert("appointments", {"appointment_id": appointment_id, "patient_id": patient_id, "doctor_id": doctor_id,
                               "date": date, "time": time, "reason": reason, "status": "scheduled"})
    fee = db.get("doctors", doctor_id)["fee"]
    return {"appointment_id": appointment_id, "patient_id": patient_id, "doctor_id": doctor_id, "status": "scheduled", "date": date,
            "time": time, "fee": fee}


@tool(mode=WRITE, produces=("appointment_id",), phrase="cancel {appointment_id}")
def cancel_appointment(db: Db, appointment_id: str) -> dict:
    """Cancel a scheduled appointment (at least 24 hours ahead).

    Args:
        appointment_id: The appointment id.
    """
    appt = _changeable(db, appointment_id)
    db.update("appointments", appointment_id, status="cancelled")
    return {"appointment_id": appointment_id, "status": "cancelled", "was_on": f"{appt['date']} {appt['time']}"}


@tool(mode=WRITE, produces=("appointment_id", "doctor_id"), phrase="move {appointment_id} to {date} at {time}",
      examples={"date": FUTURE_WEEKDAYS})
def reschedule_appointment(db: Db, appointment_id: str, date: str, time: Literal[SLOTS]) -> dict:
    """Move a scheduled appointment (at least 24 hours ahead) to another free slot with the same doctor.

    Args:
        appointment_id: The appointment id.
        date: The new day (YYYY-MM-DD).
        time: The new start time.
    """
    appt = _changeable(db, appointment_id)
    if (appt["date"], appt["time"]) == (date, time):
        raise ToolError(f"Appointment {appointment_id} is already on {date} at {time}.")
    _check_slot(db, appt["doctor_id"], appt["patient_id"], date, time, ignore=appointment_id)
    db.update("appointments", appointment_id, date=date, time=time)
    return {"appointment_id": appointment_id, "doctor_id": appt["doctor_id"], "status": "scheduled",
            "previous": f"{appt['date']} {appt['time']}", "date": date, "time": time}


@tool(mode=WRITE, produces=("prescription_id", "refill_id"), phrase="refill {prescription_id}")
def refill_prescription(db: Db, prescription_id: str) -> dict:
    """Refill an active prescription that has refills left.

    Args:
        prescription_id: The prescription id.
    """
    rx = db.get("prescriptions", prescription_id, "Prescription")
    if rx["status"] != "active":
        raise ToolError(f"Prescription {prescription_id} is {rx['status']}; ask the doctor for a new one.")
    if rx["refills_left"] < 1:
        raise ToolError(f"Prescription {prescription_id} has no refills left.")
    today = Date.fromisoformat(db.now[:10])
    next_allowed = Date.fromisoformat(rx["last_filled"]) + timedelta(days=REFILL_GAP_DAYS)
    if today < next_allowed:
        raise ToolError(f"Prescription {prescription_id} was filled on {rx['last_filled']}; the next refill is allowed from {next_allowed}.")
    refill_id = db.next_id("refills", "RF-", 7001)
    db.insert("refills", {"refill_id": refill_id, "prescription_id": prescription_id, "date": today.isoformat(),
                          "pharmacy": "Main Street Pharmacy"})
    db.update("prescriptions", prescription_id, refills_left=rx["refills_left"] - 1, last_filled=today.isoformat())
    return {"prescription_id": prescription_id, "refill_id": refill_id, "medication": rx["medication"],
            "refills_left": rx["refills_left"] - 1}


THEME = Theme(SPEC, [find_patient_by_email, get_patient, list_appointments, get_appointment, find_doctors, get_doctor_availability,
                     list_prescriptions, get_prescription, book_appointment, cancel_appointment, reschedule_appointment,
                     refill_prescription])
