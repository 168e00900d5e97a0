"""testing: a UI test management service: suites, test cases, runs, results and bugs."""

from __future__ import annotations

from typing import Literal

from agentworld_gym.theme import Theme
from agentworld_gym.tools import WRITE, Db, ToolError, tool
from agentworld_gym.world import Table, ThemeSpec, choice_col, date_col, faker_col, fk_col, id_col, int_col

COMPONENTS = ["checkout", "login", "search", "profile", "cart", "settings", "onboarding", "reports"]
Component = Literal["checkout", "login", "search", "profile", "cart", "settings", "onboarding", "reports"]
Severity = Literal["low", "medium", "high", "critical"]

SPEC = ThemeSpec(
    id="testing",
    title="Greenlight QA",
    category="Browser Automation & Testing",
    subcategory="UI Testing & Quality Assurance",
    label="UI test management",
    description="You help the QA team run browser test suites, triage flaky failures and track bugs to closure.",
    tables=(
        Table("suites", (
            id_col("suite_id", "SU-", 101), choice_col("component", COMPONENTS), choice_col("browser", ["chrome", "firefox", "safari", "edge"]),
            choice_col("state", ["enabled", "disabled"], [0.8, 0.2]), faker_col("owner", "name"),
        ), rows=16),
        Table("test_cases", (
            id_col("test_case_id", "TC-"), fk_col("suite_id", "suites"), faker_col("title", ("sentence", 5)),
            choice_col("priority", ["P1", "P2", "P3"], [0.2, 0.5, 0.3]), choice_col("stability", ["stable", "flaky"], [0.85, 0.15]),
            choice_col("status", ["active", "quarantined"], [0.9, 0.1]),
        ), rows=120),
        Table("runs", (
            id_col("run_id", "RN-", 5001), fk_col("suite_id", "suites"), faker_col("build", ("bothify", "2.#.##")),
            date_col("started_date", "2025-05-01", "2025-05-31"), choice_col("status", ["passed", "failed", "running"], [0.5, 0.4, 0.1]),
        ), rows=50),
        Table("results", (
            id_col("result_id", "RS-", 7001), fk_col("run_id", "runs"), fk_col("test_case_id", "test_cases"),
            choice_col("outcome", ["passed", "failed", "skipped"], [0.75, 0.2, 0.05]), choice_col("attempt", [1, 2], [0.9, 0.1], type="int"),
            int_col("duration_ms", 200, 30_000),
        ), rows=250),
        Table("bugs", (
            id_col("bug_id", "BG-", 9001), fk_col("test_case_id", "test_cases"), faker_col("title", ("sentence", 6)),
            choice_col("severity", ["low", "medium", "high", "critical"], [0.3, 0.4, 0.2, 0.1]),
            choice_col("status", ["open", "fixed", "closed"], [0.5, 0.3, 0.2]), date_col("reported_date", "2025-03-01", "2025-05-31"),
        ), rows=40),
    ),
    rules=(
        "Only enabled suites can be run; a run executes every active (not quarantined) test case of the suite.",
        "In a run, a test case with an open bug fails; a flaky test case fails its first attempt; every other test case passes.",
        "Flaky failures of a finished run can be re-run once (a second attempt); a run passes when the last attempt of every test case passed.",
        "A bug goes open -> fixed -> closed, and can be closed only when the latest result of its test case is a pass.",
        "A test case has at most one open bug; only flaky test cases can be quarantined.",
    ),
)


def _latest_outcome(db: Db, test_case_id: str) -> str | None:
    return db.value("SELECT r.outcome FROM results r JOIN runs n ON n.run_id = r.run_id WHERE r.test_case_id = ? "
                    "ORDER BY n.started_date DESC, r.run_id DESC, r.attempt DESC, r.result_id DESC LIMIT 1", (test_case_id,))


def _open_bugs(db: Db, test_case_id: str) -> int:
    return db.value("SELECT COUNT(*) FROM bugs WHERE test_case_id = ? AND status = 'open'", (test_case_id,))


def _run_summary(db: Db, run_id: str) -> dict:
    """Counts over the last attempt of each test case in a run."""
    rows = db.all("SELECT r.test_case_id, r.outcome FROM results r WHERE r.run_id = ? AND r.attempt = "
                  "(SELECT MAX(attempt) FROM results x WHERE x.run_id = r.run_id AND x.test_case_id = r.test_case_id) "
                  "ORDER BY r.test_case_id, r.result_id", (run_id,))
    last = {r["test_case_id"]: r["outcome"] for r in rows}
    return {f"{o}_count": sum(1 for v in last.values() if v == o) for o in ("passed", "failed", "skipped")}


@tool(produces=("suite_id",), phrase="list the test suites for the {component} area")
def list_suites(db: Db, component: Component) -> list:
    """List the test suites of one product area.

    Args:
        component: The product area.
    """
    return db.all("SELECT * FROM suites WHERE component = ? ORDER BY suite_id", (component,))


@tool(produces=("suite_id",), phrase="look up {suite_id}")
def get_suite(db: Db, suite_id: str) -> dict:
    """Get a suite's area, browser, state and owner, with its number of active and flaky test cases.

    Args:
        suite_id: The suite id, e.g. "SU-101".
    """
    suite = db.get("suites", suite_id, "Suite")
    suite["active_cases"] = db.value("SELECT COUNT(*) FROM test_cases WHERE suite_id = ? AND status = 'active'", (suite_id,))
    suite["flaky_cases"] = db.value("SELECT COUNT(*) FROM test_cases WHERE suite_id = ? AND stability = 'flaky'", (suite_id,))
    return suite


@tool(produces=("test_case_id", "suite_id"), phrase="list the test cases of {suite_id}")
def list_test_cases(db: Db, suite_id: str) -> list:
    """List a suite's test cases.

    Args:
        suite_id: The suite id.
    """
    db.get("suites", suite_id, "Suite")
    return db.all("SELECT * FROM test_cases WHERE suite_id = ? ORDER BY test_case_id", (suite_id,))


@tool(produces=("test_case_id", "suite_id"), phrase="look up {test_case_id}")
def get_test_case(db: Db, test_case_id: str) -> dict:
    """Get a test case with its latest outcome and number of open bugs.

    Args:
        test_case_id: The test case id, e.g. "TC-1001".
    """
    case = db.get("test_cases", test_case_id, "Test case")
    case["latest_outcome"] = _latest_outcome(db, test_case_id) or "never run"
    case["open_bugs"] = _open_bugs(db, test_case_id)
    return case


@tool(produces=("run_id", "suite_id"), phrase="list the runs of {suite_id}")
def list_runs(db: Db, suite_id: str) -> list:
    """List a suite's runs, newest first.

    Args:
        suite_id: The suite id.
    """
    db.get("suites", suite_id, "Suite")
    return db.all("SELECT * FROM runs WHERE suite_id = ? ORDER BY started_date DESC, run_id DESC", (suite_id,))


@tool(produces=("run_id", "suite_id"), phrase="look up {run_id}")
def get_run(db: Db, run_id: str) -> dict:
    """Get a run with its passed, failed and skipped counts (last attempt per test case).

    Args:
        run_id: The run id, e.g. "RN-5001".
    """
    run = db.get("runs", run_id, "Run")
    return {**run, **_run_summary(db, run_id)}


@tool(produces=("result_id", "test_case_id"), phrase="list the {outcome} results of {run_id}")
def list_run_results(db: Db, run_id: str, outcome: Literal["passed", "failed", "skipped"] | None = None) -> list:
    """List the results recorded in a run, optionally only those with one outcome.

    Args:
        run_id: The run id.
        outcome: Only results with this outcome.
    """
    db.get("runs", run_id, "Run")
    sql, params = "SELECT * FROM results WHERE run_id = ?", [run_id]
    if outcome:
        sql, params = sql + " AND outcome = ?", params + [outcome]
    return db.all(sql + " ORDER BY test_case_id, attempt, result_id", params)


@tool(produces=("bug_id", "test_case_id"), phrase="look up {bug_id}")
def get_bug(db: Db, bug_id: str) -> dict:
    """Get a bug with the latest outcome of its test case.

    Args:
        bug_id: The bug id, e.g. "BG-9001".
    """
    bug = db.get("bugs", bug_id, "Bug")
    bug["test_latest_outcome"] = _latest_outcome(db, bug["test_case_id"]) or "never run"
    return bug


@tool(produces=("bug_id", "test_case_id"), phrase="list the open bugs of {severity} severity")
def list_open_bugs(db: Db, severity: Severity) -> list:
    """List the open bugs of one severity, oldest first.

    Args:
        severity: The bug severity.
    """
    return db.all("SELECT * FROM bugs WHERE status = 'open' AND severity = ? ORDER BY reported_date, bug_id", (severity,))


@tool(mode=WRITE, produces=("run_id", "suite_id"), phrase="run {suite_id}")
def run_suite(db: Db, suite_id: str) -> dict:
    """Run an enabled suite now: one result per active test case.

    Args:
        suite_id: The suite id.
    """
    suite = db.get("suites", suite_id, "Suite")
    if suite["state"] != "enabled":
        raise ToolError(f"Suite {suite_id} is disabled; enable it before running it.")
    cases = db.all("SELECT * FROM test_cases WHERE suite_id = ? AND status = 'active' ORDER BY test_case_id", (suite_id,))
    if not cases:
        raise ToolError(f"Suite {suite_id} has no active test cases to run.")
    run_id = db.next_id("runs", "RN-", 5001)
    build = db.value("SELECT build FROM runs WHERE suite_id = ? ORDER BY started_date DESC, run_id DESC LIMIT 1", (suite_id,)) or "2.0.00"
    db.insert("runs", {"run_id": run_id, "suite_id": suite_id, "build": build, "started_date": db.now[:10], "status": "running"})
    for case in cases:
        failed = _open_bugs(db, case["test_case_id"]) > 0 or case["stability"] == "flaky"
        db.insert("results", {"result_id": db.next_id("results", "RS-", 7001), "run_id": run_id, "test_case_id": case["test_case_id"],
                              "outcome": "failed" if failed else "passed", "attempt": 1, "duration_ms": 1000})
    summary = _run_summary(db, run_id)
    db.update("runs", run_id, status="failed" if summary["failed_count"] else "passed")
    return {"run_id": run_id, "suite_id": suite_id, "status": "failed" if summary["failed_count"] else "passed", **summary}


@tool(mode=WRITE, produces=("run_id",), phrase="re-run the flaky failures of {run_id}")
def rerun_flaky(db: Db, run_id: str) -> dict:
    """Give every flaky test case that failed its first attempt in a finished run a second attempt.

    Args:
        run_id: The run id.
    """
    run = db.get("runs", run_id, "Run")
    if run["status"] == "running":
        raise ToolError(f"Run {run_id} is still running; wait until it finishes.")
    failures = db.all("SELECT r.test_case_id FROM results r JOIN test_cases c ON c.test_case_id = r.test_case_id WHERE r.run_id = ? "
                      "AND r.outcome = 'failed' AND r.attempt = 1 AND c.stability = 'flaky' AND NOT EXISTS "
                      "(SELECT 1 FROM results x WHERE x.run_id = r.run_id AND x.test_case_id = r.test_case_id AND x.attempt > 1) "
                      "ORDER BY r.test_case_id", (run_id,))
    if not failures:
        raise ToolError(f"Run {run_id} has no flaky failures left to re-run.")
    for row in failures:
        outcome = "failed" if _open_bugs(db, row["test_case_id"]) else "passed"
        db.insert("results", {"result_id": db.next_id("results", "RS-", 7001), "run_id": run_id, "test_case_id": row["test_case_id"],
                              "outcome": outcome, "attempt": 2, "duration_ms": 1000})
    summary = _run_summary(db, run_id)
    status = "failed" if summary["failed_count"] else "passed"
    db.update("runs", run_id, status=status)
    return {"run_id": run_id, "rerun": len(failures), "status": status, **summary}


@tool(mode=WRITE, produces=("suite_id",), phrase="mark {suite_id} as {state}")
def set_suite_state(db: Db, suite_id: str, state: Literal["enabled", "disabled"]) -> dict:
    """Enable or disable a suite.

    Args:
        suite_id: The suite id.
        state: The new state.
    """
    suite = db.get("suites", suite_id, "Suite")
    if suite["state"] == state:
        raise ToolError(f"Suite {suite_id} is already {state}.")
    db.update("suites", suite_id, state=state)
    return {"suite_id": suite_id, "state": state}


@tool(mode=WRITE, produces=("test_case_id",), phrase="quarantine {test_case_id}")
def quarantine_test_case(db: Db, test_case_id: str) -> dict:
    """Quarantine a flaky test case so that runs skip it.

    Args:
        test_case_id: The test case id.
    """
    case = db.get("test_cases", test_case_id, "Test case")
    if case["stability"] != "flaky":
        raise ToolError(f"Test case {test_case_id} is stable; only flaky test cases can be quarantined.")
    if case["status"] == "quarantined":
        raise ToolError(f"Test case {test_case_id} is already quarantined.")
    db.update("test_cases", test_case_id, status="quarantined")
    return {"test_case_id": test_case_id, "status": "quarantined"}


@tool(mode=WRITE, produces=("bug_id", "test_case_id"), phrase='file a {severity} bug titled "{title}" against {test_case_id}',
      examples={"title": ["Button does not respond", "Page times out on submit", "Wrong total shown", "Layout breaks on small screens"]})
def file_bug(db: Db, test_case_id: str, title: str, severity: Severity) -> dict:
    """File a bug against a test case that has no open bug yet.

    Args:
        test_case_id: The test case id.
        title: A short description of the bug.
        severity: How bad it is.
    """
    db.get("test_cases", test_case_id, "Test case")
    if not title.strip():
        raise ToolError("A bug needs a title.")
    existing = db.value("SELECT bug_id FROM bugs WHERE test_case_id = ? AND status = 'open' ORDER BY bug_id LIMIT 1", (test_case_id,))
    if existing:
        raise ToolError(f"Test case {test_case_id} already has an open bug ({existing}).")
    bug_id = db.next_id("bugs", "BG-", 9001)
    db.insert("bugs", {"bug_id": bug_id, "test_case_id": test_case_id, "title": title.strip(), "severity": severity,
                       "status": "open", "reported_date": db.now[:10]})
    return {"bug_id": bug_id, "test_case_id": test_case_id, "status": "open"}


@tool(mode=WRITE, produces=("bug_id",), phrase="mark {bug_id} as fixed")
def mark_bug_fixed(db: Db, bug_id: str) -> dict:
    """Mark an open bug as fixed (it can be closed once its test passes).

    Args:
        bug_id: The bug id.
    """
    bug = db.get("bugs", bug_id, "Bug")
    if bug["status"] != "open":
        raise ToolError(f"Bug {bug_id} is {bug['status']}; only open bugs can be marked fixed.")
    db.update("bugs", bug_id, status="fixed")
    return {"bug_id": bug_id, "status": "fixed"}


@tool(mode=WRITE, produces=("bug_id",), phrase="close {bug_id}")
def close_bug(db: Db, bug_id: str) -> dict:
    """Close a fixed bug whose test case passed its latest run.

    Args:
        bug_id: The bug id.
    """
    bug = db.get("bugs", bug_id, "Bug")
    if bug["status"] != "fixed":
        raise ToolError(f"Bug {bug_id} is {bug['status']}; only fixed bugs can be closed.")
    latest = _latest_outcome(db, bug["test_case_id"])
    if latest != "passed":
        raise ToolError(f"Bug {bug_id} cannot be closed: the latest result of test case {bug['test_case_id']} is {latest or 'missing'}, not passed.")
    db.update("bugs", bug_id, status="closed")
    return {"bug_id": bug_id, "status": "closed"}


THEME = Theme(SPEC, [list_suites, get_suite, list_test_cases, get_test_case, list_runs, get_run, list_run_results, get_bug,
                     list_open_bugs, run_suite, rerun_flaky, set_suite_state, quarantine_test_case, file_bug, mark_bug_fixed, close_bug])
