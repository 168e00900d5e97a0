"""Every flagship theme: registry entry, tool mix, wording metadata, check_env, and graded synthesized
tasks (the oracle scores 1.0, a do-nothing submit 0.0). Then the business rules of the ten themes
retail ... news: each refused call comes back through env.step as an error observation naming the
rule, and leaves the database exactly as it was.
"""

from __future__ import annotations

import json
import re

import gymnasium as gym
import pytest
from agentworld_gym.envs import FLAGSHIPS, env_id, get_theme

import agentworld_gym
from agentworld_gym.env import AgentWorldEnv
from agentworld_gym.policies import OraclePolicy, run_episode
from agentworld_gym.utils import check_env

gym.register_envs(agentworld_gym)

THEMES = list(FLAGSHIPS)
TASKS_PER_THEME = 51  # difficulties 1, 2, 3 in turn
NOTHING = json.dumps({"name": "submit", "arguments": {"answer": "__nothing__"}})

_ENVS: dict[str, AgentWorldEnv] = {}


def env_for(theme_id: str) -> AgentWorldEnv:
    """One env per theme for the whole module (building envs is the slow part); reset per use."""
    if theme_id not in _ENVS:
        _ENVS[theme_id] = AgentWorldEnv(theme_id, difficulty=1, max_turns=60)
    return _ENVS[theme_id]


# ------------------------------------------------------------------------------------------ every flagship


@pytest.mark.parametrize("theme_id", THEMES)
def test_registry_entry_matches_spec_and_taxonomy(theme_id, shared_data):
    theme = get_theme(theme_id)
    taxonomy = json.loads((shared_data / "taxonomy.json").read_text())
    tree = {c["name"]: {s["name"] for s in c["subcategories"]} for c in taxonomy["categories"]}
    category, subcategory = FLAGSHIPS[theme_id]
    assert (theme.spec.category, theme.spec.subcategory) == (category, subcategory)
    assert subcategory in tree[category]
    assert 4 <= len(theme.spec.tables) <= 6


@pytest.mark.parametrize("theme_id", THEMES)
def test_tool_mix(theme_id):
    tools = list(get_theme(theme_id).toolset)
    writes = [t for t in tools if t.writes]
    assert len(tools) >= 8 and len(writes) >= 3 and len(tools) - len(writes) >= 3, [t.name for t in tools]


@pytest.mark.parametrize("theme_id", THEMES)
def test_wording_metadata(theme_id):
    """Phrases never leak identifiers, mention every argument synthesis may fill, and produce real keys."""
    theme = get_theme(theme_id)
    identifiers = {t.name for t in theme.spec.tables} | {c.name for t in theme.spec.tables for c in t.columns}
    identifiers = {i for i in identifiers if "_" in i}
    problems = []
    for t in theme.toolset:
        props = t.parameters["properties"]
        required = set(t.parameters["required"])
        slots = set(re.findall(r"\{(\w+)\}", t.phrase))
        text = re.sub(r"\{\w+\}", "", t.phrase)
        if not t.phrase or t.name in t.phrase or any(i in text for i in identifiers):
            problems.append(f"{t.name}: phrase {t.phrase!r} is missing or names a tool/table/column")
        if slots - set(props):
            problems.append(f"{t.name}: phrase slots {sorted(slots - set(props))} are not parameters")
        for p, prop in props.items():
            fillable = p in required or "enum" in prop or p in t.examples or (p in t.consumes and theme.key_of(p))
            if fillable and p not in slots:
                problems.append(f"{t.name}: argument {p!r} may be filled but the phrase does not say it")
            is_key = p in t.consumes and theme.key_of(p)
            sampleable = "enum" in prop or p in t.examples or any(p == c.name for tb in theme.spec.tables for c in tb.columns)
            if p in required and not is_key and not sampleable:
                problems.append(f"{t.name}: required {p!r} has no examples, enum or same-named column")
        if not t.produces or any(theme.key_of(k) is None for k in t.produces):
            problems.append(f"{t.name}: produces {t.produces} must name entity keys")
    assert not problems, "\n".join(problems)


def _plain_value(theme, t, p: str, prop: dict, db):
    if p in t.examples:
        return t.examples[p][0]
    if "enum" in prop:
        return prop["enum"][0]
    for table in theme.spec.tables:
        if any(c.name == p for c in table.columns):
            return db.value(f'SELECT "{p}" FROM "{table.name}" WHERE "{p}" IS NOT NULL ORDER BY 1 LIMIT 1')
    return {"string": "x", "integer": 1, "number": 1.0, "boolean": False}.get(prop.get("type"), "x")


@pytest.mark.parametrize("theme_id", THEMES)
def test_tools_fail_cleanly_and_reads_never_write(theme_id):
    """Every tool, called with real ids and with unknown ids, answers (a result or a domain error),
    never an internal failure; read tools leave the state hash alone."""
    from agentworld_gym.actions import ToolCall

    env = env_for(theme_id)
    env.reset(seed=0)
    theme = env.theme
    for t in theme.toolset:
        props, required = t.parameters["properties"], t.parameters["required"]
        for unknown in (False, True):
            args = {}
            for p in required:
                key = theme.key_of(p) if p in t.consumes else None
                if key:
                    table, column = theme.entity_keys[key]
                    args[p] = "NOPE-0" if unknown else env.db.value(f'SELECT "{column}" FROM "{table}" ORDER BY 1 LIMIT 1')
                else:
                    args[p] = _plain_value(theme, t, p, props[p], env.db)
            before = env.state_hash()
            result = theme.toolset.call(env.db, ToolCall(t.name, args))
            assert "failed internally" not in result.content, (t.name, args, result.content)
            if unknown and any(p in t.consumes for p in required):
                assert not result.ok, (t.name, args, result.content)
            if not t.writes or not result.ok:
                assert env.state_hash() == before, (t.name, args)
            record = result.data[0] if isinstance(result.data, list) and result.data else result.data
            if result.ok and isinstance(record, dict):  # what a tool says it produces is in its output
                fields = set(record)
                missing = [k for k in t.produces if not any(f == k or f.endswith("_" + k) for f in fields)]
                assert not missing, f"{t.name} declares {missing} but returns {sorted(fields)}"


@pytest.mark.parametrize("theme_id", THEMES)
def test_check_env(theme_id):
    for difficulty in (1, 3):
        check_env(gym.make(env_id(theme_id), difficulty=difficulty), seeds=(0, 1))


@pytest.mark.parametrize("theme_id", THEMES)
def test_oracle_scores_one_and_nothing_scores_zero(theme_id):
    env = env_for(theme_id)
    tools_used = set()
    for seed in range(TASKS_PER_THEME):
        options = {"difficulty": 1 + seed % 3}
        result = run_episode(env, OraclePolicy(env), seed=seed, options=options)
        assert result["difficulty"] == options["difficulty"]
        assert result["reward"] == 1.0, (result["task_id"], env.task.instruction, result["info"].get("verification"))
        tools_used |= {c["name"] for c in env.task.solution}
        env.reset(seed=seed, options=options)
        _, reward, terminated, _, info = env.step(NOTHING)
        assert terminated and reward == 0.0, (env.task.instruction, info.get("verification"))
    assert len(tools_used) >= 4, tools_used  # tasks exercise more than a corner of the theme


# ------------------------------------------------------------------------------------------ business rules (ten themes)


def fresh(theme_id: str) -> AgentWorldEnv:
    env = env_for(theme_id)
    env.reset(seed=0)
    return env


def one(env: AgentWorldEnv, sql: str, params=()) -> dict:
    row = env.db.one(sql, params)
    assert row is not None, f"the world has no row for: {sql}"
    return row


def act(tool: str, /, **arguments) -> str:
    return json.dumps({"name": tool, "arguments": arguments})


def done(env: AgentWorldEnv, tool: str, /, **arguments) -> dict:
    """A call that must succeed; returns its result."""
    _, _, terminated, _, info = env.step(act(tool, **arguments))
    content = info["messages"][-1]["content"]
    assert not terminated and not content.startswith("Error"), content
    return json.loads(content)


def refused(env: AgentWorldEnv, expected: str, tool: str, /, **arguments) -> None:
    """A call the rules forbid: an error observation containing `expected`, and no state change."""
    before = env.state_hash()
    _, reward, terminated, truncated, info = env.step(act(tool, **arguments))
    message = info["messages"][-1]
    assert message["role"] == "tool" and message["content"].startswith("Error: "), message
    assert expected in message["content"], message["content"]
    assert (reward, terminated, truncated) == (0.0, False, False)
    assert env.state_hash() == before


def test_retail_rules():
    env = fresh("retail")
    shipped = one(env, "SELECT order_id FROM orders WHERE status = 'shipped' ORDER BY order_id")
    refused(env, "only pending orders can be cancelled", "cancel_order", order_id=shipped["order_id"])
    old = one(env, "SELECT i.item_id FROM order_items i JOIN orders o ON o.order_id = i.order_id "
                   "WHERE o.status = 'delivered' AND o.updated < '2025-05-01' ORDER BY i.item_id")
    refused(env, "returns close after 30 days", "request_return", item_id=old["item_id"], reason="damaged")
    ret = one(env, "SELECT r.return_id, i.quantity * i.unit_price AS paid FROM returns r JOIN order_items i ON i.item_id = r.item_id "
                   "WHERE r.status = 'requested' ORDER BY r.return_id")
    refused(env, "exceeds", "issue_refund", return_id=ret["return_id"], amount=round(ret["paid"] + 1, 2))
    low = one(env, "SELECT product_id, stock FROM products WHERE status = 'active' AND stock < 9 ORDER BY product_id")
    customer = one(env, "SELECT customer_id FROM customers ORDER BY customer_id")["customer_id"]
    refused(env, "Not enough stock", "place_order", customer_id=customer, product_id=low["product_id"], quantity=low["stock"] + 1)


def test_retail_cancel_restocks_and_refund_is_bounded():
    env = fresh("retail")
    product = one(env, "SELECT product_id, stock FROM products WHERE status = 'active' AND stock >= 3 ORDER BY product_id")
    customer = one(env, "SELECT customer_id FROM customers ORDER BY customer_id")["customer_id"]
    order = done(env, "place_order", customer_id=customer, product_id=product["product_id"], quantity=2)
    assert order["stock_left"] == product["stock"] - 2
    assert done(env, "cancel_order", order_id=order["order_id"])["units_restocked"] == 2
    assert env.db.value("SELECT stock FROM products WHERE product_id = ?", (product["product_id"],)) == product["stock"]
    refused(env, "only pending orders", "cancel_order", order_id=order["order_id"])


def test_travel_rules():
    env = fresh("travel")
    full = one(env, "SELECT flight_id FROM flights WHERE seats_business = 0 AND status != 'cancelled' AND date > '2025-06-01' ORDER BY flight_id")
    passenger = one(env, "SELECT passenger_id FROM passengers ORDER BY passenger_id")["passenger_id"]
    refused(env, "no free business seats", "book_flight", passenger_id=passenger, flight_id=full["flight_id"], cabin="business")
    booking = one(env, "SELECT b.booking_id, f.destination FROM bookings b JOIN flights f ON f.flight_id = b.flight_id "
                       "WHERE b.status = 'confirmed' AND f.date > '2025-06-02' ORDER BY b.booking_id")
    other = one(env, "SELECT flight_id FROM flights WHERE destination != ? AND date > '2025-06-02' ORDER BY flight_id", (booking["destination"],))
    refused(env, "not the booked route", "change_flight", booking_id=booking["booking_id"], new_flight_id=other["flight_id"])
    refused(env, "the limit is 3", "add_bags", booking_id=booking["booking_id"], bags=4)
    flown = one(env, "SELECT b.booking_id FROM bookings b JOIN flights f ON f.flight_id = b.flight_id "
                     "WHERE b.status = 'confirmed' AND f.date < '2025-06-01' ORDER BY b.booking_id")
    refused(env, "already departed", "cancel_booking", booking_id=flown["booking_id"])


def test_clinic_rules():
    env = fresh("clinic")
    doctor = one(env, "SELECT doctor_id FROM doctors WHERE status = 'active' ORDER BY doctor_id")["doctor_id"]
    patients = [r["patient_id"] for r in env.db.all("SELECT patient_id FROM patients ORDER BY patient_id LIMIT 2")]
    free = done(env, "get_doctor_availability", doctor_id=doctor, date="2025-06-02")["free_slots"]
    assert "09:00" in free
    booked = done(env, "book_appointment", patient_id=patients[0], doctor_id=doctor, date="2025-06-02", time="09:00", reason="checkup")
    refused(env, "already booked", "book_appointment", patient_id=patients[1], doctor_id=doctor, date="2025-06-02", time="09:00",
            reason="checkup")
    refused(env, "24 hours' notice", "cancel_appointment", appointment_id=booked["appointment_id"])
    refused(env, "weekdays only", "book_appointment", patient_id=patients[1], doctor_id=doctor, date="2025-06-07", time="10:00",
            reason="checkup")
    empty = one(env, "SELECT prescription_id FROM prescriptions WHERE status = 'active' AND refills_left = 0 ORDER BY prescription_id")
    refused(env, "no refills left", "refill_prescription", prescription_id=empty["prescription_id"])


def test_tickets_rules():
    env = fresh("tickets")
    ticket = one(env, "SELECT t.ticket_id, t.project_id FROM tickets t JOIN projects p ON p.project_id = t.project_id "
                      "WHERE t.status = 'open' AND p.status = 'active' ORDER BY t.ticket_id")
    refused(env, "cannot move from open to review", "move_ticket", ticket_id=ticket["ticket_id"], status="review")
    outsider = one(env, "SELECT member_id FROM members WHERE member_id NOT IN (SELECT member_id FROM memberships WHERE project_id = ?) "
                        "ORDER BY member_id", (ticket["project_id"],))
    refused(env, "is not a member of project", "assign_ticket", ticket_id=ticket["ticket_id"], member_id=outsider["member_id"])
    refused(env, "cannot comment", "add_comment", ticket_id=ticket["ticket_id"], member_id=outsider["member_id"], body="Looks good")


def test_tickets_wip_limit():
    env = fresh("tickets")
    project = one(env, "SELECT p.project_id, p.wip_limit, m.member_id FROM projects p JOIN memberships m ON m.project_id = p.project_id "
                       "WHERE p.status = 'active' ORDER BY p.project_id, m.member_id")
    held = env.db.value("SELECT COUNT(*) FROM tickets WHERE project_id = ? AND assignee_id = ? AND status = 'in progress'",
                        (project["project_id"], project["member_id"]))
    for _ in range(project["wip_limit"] - held):  # fill the member's WIP up to the limit with new tickets
        ticket = done(env, "create_ticket", project_id=project["project_id"], title="Chore", priority="low")
        done(env, "assign_ticket", ticket_id=ticket["ticket_id"], member_id=project["member_id"])
        done(env, "move_ticket", ticket_id=ticket["ticket_id"], status="in progress")
    ticket = done(env, "create_ticket", project_id=project["project_id"], title="One too many", priority="low")
    done(env, "assign_ticket", ticket_id=ticket["ticket_id"], member_id=project["member_id"])
    refused(env, f"(limit {project['wip_limit']})", "move_ticket", ticket_id=ticket["ticket_id"], status="in progress")


def test_weather_rules():
    env = fresh("weather")
    down = one(env, "SELECT station_id FROM stations WHERE status != 'active' ORDER BY station_id")
    reading = dict(temperature_c=12.0, humidity=50, wind_kph=5.0, precipitation_mm=0.0, condition="clear")
    refused(env, "only active stations", "record_observation", station_id=down["station_id"], **reading)
    up = one(env, "SELECT station_id FROM stations WHERE status = 'active' ORDER BY station_id")
    refused(env, "humidity must be between 0 and 100", "record_observation", station_id=up["station_id"], **{**reading, "humidity": 150})
    alert = one(env, "SELECT a.station_id, a.kind FROM alerts a JOIN stations s ON s.station_id = a.station_id "
                     "WHERE a.status = 'active' AND s.status = 'active' ORDER BY a.alert_id")
    refused(env, "already has an active", "issue_alert", station_id=alert["station_id"], kind=alert["kind"], severity="minor", days=1)
    gone = one(env, "SELECT alert_id FROM alerts WHERE status = 'expired' ORDER BY alert_id")
    refused(env, "only active alerts can be cancelled", "cancel_alert", alert_id=gone["alert_id"])


def test_crypto_rules():
    env = fresh("crypto")
    held = one(env, "SELECT b.wallet_id, b.token_id, SUM(b.amount) AS amount FROM balances b JOIN wallets w ON w.wallet_id = b.wallet_id "
                    "WHERE w.status = 'active' GROUP BY b.wallet_id, b.token_id HAVING SUM(b.amount) > 50 ORDER BY b.wallet_id, b.token_id")
    target = one(env, "SELECT token_id FROM tokens WHERE token_id != ? ORDER BY token_id", (held["token_id"],))["token_id"]
    swap = dict(wallet_id=held["wallet_id"], from_token_id=held["token_id"], to_token_id=target)
    refused(env, "Insufficient", "swap_tokens", **swap, amount=round(held["amount"] + 1, 2), max_slippage_pct=100.0)
    if env.db.value("SELECT COUNT(*) FROM allowances WHERE wallet_id = ? AND token_id = ? AND amount > 0", (held["wallet_id"], held["token_id"])):
        done(env, "revoke_allowance", wallet_id=held["wallet_id"], token_id=held["token_id"])
    refused(env, "approve at least", "swap_tokens", **swap, amount=10.0, max_slippage_pct=100.0)
    done(env, "approve_token", wallet_id=held["wallet_id"], token_id=held["token_id"], amount=10.0)
    refused(env, "exceeds the accepted slippage", "swap_tokens", **swap, amount=10.0, max_slippage_pct=0.0)
    out = done(env, "swap_tokens", **swap, amount=10.0, max_slippage_pct=100.0)
    assert out["status"] == "completed"
    refused(env, "cannot be swapped for itself", "quote_swap", from_token_id=target, to_token_id=target, amount=1.0)


def test_github_rules():
    env = fresh("github")
    failing = one(env, "SELECT p.pull_request_id, r.owner_id FROM pull_requests p JOIN repos r ON r.repo_id = p.repo_id "
                       "WHERE p.state = 'open' AND p.checks = 'failing' AND r.status = 'active' ORDER BY p.pull_request_id")
    refused(env, "they must pass before merging", "merge_pull_request", pull_request_id=failing["pull_request_id"], user_id=failing["owner_id"])
    reader = one(env, "SELECT p.pull_request_id, c.user_id FROM pull_requests p JOIN repos r ON r.repo_id = p.repo_id "
                      "JOIN collaborators c ON c.repo_id = p.repo_id WHERE p.state = 'open' AND r.status = 'active' AND c.permission = 'read' "
                      "AND c.user_id != r.owner_id AND c.user_id NOT IN (SELECT user_id FROM collaborators c2 WHERE c2.repo_id = p.repo_id "
                      "AND c2.permission != 'read') ORDER BY p.pull_request_id")
    refused(env, "merging needs write rights", "merge_pull_request", **reader)
    own = one(env, "SELECT pull_request_id, author_id FROM pull_requests WHERE state = 'open' ORDER BY pull_request_id")
    refused(env, "cannot review it", "review_pull_request", pull_request_id=own["pull_request_id"], user_id=own["author_id"],
            verdict="approved")
    unreviewed = one(env, "SELECT p.pull_request_id, r.owner_id FROM pull_requests p JOIN repos r ON r.repo_id = p.repo_id "
                          "WHERE p.state = 'open' AND p.checks = 'passing' AND r.status = 'active' AND p.pull_request_id NOT IN "
                          "(SELECT pull_request_id FROM reviews) ORDER BY p.pull_request_id")
    refused(env, "no approving review", "merge_pull_request", pull_request_id=unreviewed["pull_request_id"], user_id=unreviewed["owner_id"])


def test_cloud_rules():
    env = fresh("cloud")
    running = one(env, "SELECT instance_id FROM instances WHERE state = 'running' ORDER BY instance_id")["instance_id"]
    refused(env, "needs it to be stopped", "start_instance", instance_id=running)
    refused(env, "needs it to be stopped", "resize_instance", instance_id=running, machine_type="std-8")
    gone = one(env, "SELECT instance_id FROM instances WHERE state = 'terminated' ORDER BY instance_id")["instance_id"]
    refused(env, "terminated", "stop_instance", instance_id=gone)
    project = one(env, "SELECT project_id FROM projects WHERE status = 'active' ORDER BY project_id")["project_id"]
    for i in range(12):  # launch big machines until a quota (instances or vCPUs) stops it
        before = env.state_hash()
        _, _, _, _, info = env.step(act("launch_instance", project_id=project, name=f"quota-probe-{i}", machine_type="std-8"))
        content = info["messages"][-1]["content"]
        if content.startswith("Error"):
            assert "quota" in content, content
            assert env.state_hash() == before
            break
    else:
        pytest.fail("no quota stopped 12 launches of std-8 instances")


def test_calendar_rules():
    env = fresh("calendar")
    user = one(env, "SELECT user_id FROM users WHERE work_start <= '09:00' AND work_end >= '17:00' ORDER BY user_id")["user_id"]
    slot = dict(date="2025-06-04", start="10:00", duration_min=60)
    room = done(env, "find_free_rooms", **slot)[0]["room_id"]
    first = done(env, "create_event", user_id=user, title="Design review", **slot)
    second = done(env, "create_event", user_id=user, title="Team sync", **slot)
    done(env, "book_room", event_id=first["event_id"], user_id=user, room_id=room)
    refused(env, f"already booked by event {first['event_id']}", "book_room", event_id=second["event_id"], user_id=user, room_id=room)
    other = one(env, "SELECT user_id FROM users WHERE user_id != ? ORDER BY user_id", (user,))["user_id"]
    refused(env, "Only the organiser", "cancel_event", event_id=first["event_id"], user_id=other)
    early = one(env, "SELECT user_id FROM users WHERE work_end = '16:00' ORDER BY user_id")["user_id"]
    refused(env, "outside", "create_event", user_id=early, title="Late sync", date="2025-06-04", start="16:00", duration_min=30)
    done(env, "invite_user", event_id=first["event_id"], user_id=user, invitee_user_id=other)
    refused(env, "is already invited", "invite_user", event_id=first["event_id"], user_id=user, invitee_user_id=other)


def test_news_rules():
    env = fresh("news")
    retracted = one(env, "SELECT article_id FROM articles WHERE status = 'retracted' ORDER BY article_id")["article_id"]
    reader = one(env, "SELECT reader_id FROM readers WHERE plan = 'free' ORDER BY reader_id")["reader_id"]
    refused(env, "retracted and cannot be bookmarked", "bookmark_article", reader_id=reader, article_id=retracted)
    suspended = one(env, "SELECT source_id FROM sources WHERE status = 'suspended' ORDER BY source_id")["source_id"]
    refused(env, "takes no new followers", "follow_source", reader_id=reader, source_id=suspended)
    open_sources = [r["source_id"] for r in env.db.all(
        "SELECT source_id FROM sources WHERE status = 'active' AND source_id NOT IN "
        "(SELECT source_id FROM subscriptions WHERE reader_id = ? AND status = 'active') ORDER BY source_id", (reader,))]
    following = done(env, "get_reader", reader_id=reader)["sources_followed"]
    for source in open_sources[: 5 - following]:
        done(env, "follow_source", reader_id=reader, source_id=source)
    refused(env, "(limit 5)", "follow_source", reader_id=reader, source_id=open_sources[5 - following])
