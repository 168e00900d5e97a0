"""Flagship themes (set B): business rules through env.step, check_env, and oracle/do-nothing grading.

Rule tests pick their entities from the world with SQL (so they follow the data, not hard-coded ids),
send the refused call through `env.step` (Python-call or JSON syntax) and check that the specific
ToolError comes back as an error observation and that the database is unchanged.
"""

from __future__ import annotations

import json
import math
import re
import statistics

import gymnasium as gym
import pytest
from agentworld_gym.envs import FLAGSHIPS, get_theme

import agentworld_gym
from agentworld_gym.env import AgentWorldEnv
from agentworld_gym.policies import OraclePolicy, run_episode
from agentworld_gym.synthesis import synthesize_task
from agentworld_gym.utils import check_env
from agentworld_gym.world import build_database

gym.register_envs(agentworld_gym)

THEMES = ["websearch", "scholar", "social", "testing", "mlhub", "compute", "music", "docs", "security"]
TASKS_PER_THEME = 50
_ENVS: dict[str, AgentWorldEnv] = {}


def fresh(theme: str) -> AgentWorldEnv:
    """One env per theme, reset to a fresh copy of its world."""
    env = _ENVS.get(theme)
    if env is None:
        env = _ENVS[theme] = AgentWorldEnv(theme, difficulty=1, max_turns=60)
    env.reset(seed=0)
    return env


def row(env: AgentWorldEnv, sql: str, params=()) -> dict:
    found = env.db.one(sql, params)
    assert found is not None, f"the world has no entity for: {sql}"
    return found


def call(tool: str, **arguments) -> str:
    return json.dumps({"name": tool, "arguments": arguments})


def ok(env: AgentWorldEnv, action: str):
    _, _, terminated, _, info = env.step(action)
    message = info["messages"][-1]
    assert not terminated and not message["content"].startswith("Error"), message["content"]
    return json.loads(message["content"])


def refused(env: AgentWorldEnv, action: str, expected: str) -> None:
    before = env.state_hash()
    _, reward, terminated, truncated, info = env.step(action)
    message = info["messages"][-1]
    assert message["role"] == "tool" and message["content"].startswith("Error: "), message
    assert expected in message["content"], message["content"]
    assert not terminated and not truncated and reward == 0.0
    assert env.state_hash() == before


# ------------------------------------------------------------------------------------------ structure


@pytest.mark.parametrize("theme_id", THEMES)
def test_theme_shape(theme_id):
    theme = get_theme(theme_id)
    assert FLAGSHIPS[theme_id] == (theme.spec.category, theme.spec.subcategory)
    assert 4 <= len(theme.spec.tables) <= 6 and len(theme.toolset) >= 8
    assert sum(t.writes for t in theme.toolset) >= 3 and sum(not t.writes for t in theme.toolset) >= 3
    identifiers = {t.name for t in theme.spec.tables} | {c.name for t in theme.spec.tables for c in t.columns}
    for t in theme.toolset:
        assert t.produces, t.name
        text = re.sub(r"\{\w+\}", "", t.phrase)
        assert t.phrase and "_" not in text and t.name not in t.phrase, t.name
        assert not any(i in text.split() for i in identifiers if "_" in i), t.name
        placeholders = set(re.findall(r"\{(\w+)\}", t.phrase))
        props = t.parameters["properties"]
        # whatever synthesis may fill in (required args, entity keys, optional enums/examples) must be worded
        fillable = set(t.parameters["required"]) | set(t.consumes) | {p for p, s in props.items() if "enum" in s or p in t.examples}
        assert fillable <= placeholders <= set(props), (t.name, fillable, placeholders)
        for p in t.parameters["required"]:  # synthesis can sample every required plain argument
            assert (p in t.consumes and theme.key_of(p)) or p in t.examples or "enum" in props[p] or p in identifiers, (t.name, p)
    conn = build_database(theme.spec)
    assert len(conn.serialize()) < 1_000_000
    conn.close()


# ------------------------------------------------------------------------------------------ business rules


def test_websearch_rules():
    env = fresh("websearch")
    free = "site_id NOT IN (SELECT site_id FROM blocklist) AND status = 'active'"
    site = row(env, f"SELECT * FROM sites WHERE robots_policy = 'disallow' AND {free} ORDER BY site_id")
    refused(env, f'start_crawl(site_id="{site["site_id"]}", pages=10)', "disallow crawling")
    site = row(env, f"SELECT * FROM sites WHERE robots_policy = 'allow' AND {free} ORDER BY site_id")
    refused(env, call("start_crawl", site_id=site["site_id"], pages=site["daily_crawl_quota"] + 1), "Daily crawl quota")
    site = row(env, f"SELECT * FROM sites WHERE robots_policy = 'partial' AND {free} ORDER BY site_id")
    refused(env, call("start_crawl", site_id=site["site_id"], pages=51), "at most 50 pages")
    # blocking a site hides its pages from search and refuses further crawls
    page = row(env, "SELECT * FROM pages WHERE status != 'removed' AND site_id NOT IN (SELECT site_id FROM blocklist) ORDER BY rank_score DESC")
    query = call("search_pages", query=page["topic"], language=page["language"])
    assert page["page_id"] in {p["page_id"] for p in ok(env, query)}
    ok(env, call("block_site", site_id=page["site_id"], reason="spam"))
    assert page["page_id"] not in {p["page_id"] for p in ok(env, query)}
    refused(env, call("recrawl_page", page_id=page["page_id"]), "on the blocklist")


def test_scholar_rules():
    env = fresh("scholar")
    paper = row(env, "SELECT * FROM papers WHERE status = 'retracted' ORDER BY paper_id")
    rl = row(env, "SELECT r.reading_list_id FROM reading_lists r WHERE (SELECT COUNT(*) FROM reading_list_items i "
                  "WHERE i.reading_list_id = r.reading_list_id) < 10 ORDER BY r.reading_list_id")
    refused(env, f'add_to_reading_list(reading_list_id="{rl["reading_list_id"]}", paper_id="{paper["paper_id"]}")', "was retracted")
    old = row(env, "SELECT * FROM papers WHERE status != 'retracted' ORDER BY year, paper_id")
    new = row(env, "SELECT * FROM papers WHERE status != 'retracted' AND year > ? ORDER BY paper_id", (old["year"],))
    refused(env, call("add_citation", paper_id=old["paper_id"], doi=new["doi"], context="method"), "appeared later")
    refused(env, call("add_citation", paper_id=old["paper_id"], doi=old["doi"], context="method"), "cannot cite itself")


def test_social_rules():
    env = fresh("social")
    user = row(env, "SELECT * FROM users WHERE status = 'active' ORDER BY user_id")
    refused(env, call("create_post", user_id=user["user_id"], text="x" * 281), "at most 280 characters")
    suspended = row(env, "SELECT * FROM users WHERE status = 'suspended' ORDER BY user_id")
    refused(env, f'create_post(user_id="{suspended["user_id"]}", text="hello")', "suspended")
    post = row(env, "SELECT * FROM posts WHERE audience = 'followers' AND status = 'visible' ORDER BY post_id")
    stranger = row(env, "SELECT * FROM users u WHERE status = 'active' AND user_id != ? AND NOT EXISTS (SELECT 1 FROM follows f WHERE "
                        "f.follower_user_id = u.user_id AND f.followee_user_id = ? AND f.status = 'accepted') AND NOT EXISTS (SELECT 1 FROM blocks b "
                        "WHERE (b.blocker_user_id = u.user_id AND b.blocked_user_id = ?) OR (b.blocker_user_id = ? AND b.blocked_user_id = u.user_id)) "
                        "ORDER BY user_id", (post["author_user_id"],) * 4)
    refused(env, call("comment_on_post", user_id=stranger["user_id"], post_id=post["post_id"], text="Nice!"), "followers only")
    own = row(env, "SELECT p.* FROM posts p JOIN users u ON u.user_id = p.author_user_id WHERE u.status = 'active' AND p.status = 'visible' ORDER BY post_id")
    refused(env, call("report_post", user_id=own["author_user_id"], post_id=own["post_id"], reason="spam"), "their own posts")


def test_testing_rules_and_bug_lifecycle():
    env = fresh("testing")
    suite = row(env, "SELECT * FROM suites WHERE state = 'disabled' ORDER BY suite_id")
    refused(env, f'run_suite(suite_id="{suite["suite_id"]}")', "is disabled")
    # an open bug on an active case of an enabled suite, whose test has not passed lately
    candidates = env.db.all("SELECT b.bug_id, c.test_case_id, c.suite_id FROM bugs b JOIN test_cases c ON c.test_case_id = b.test_case_id "
                            "JOIN suites s ON s.suite_id = c.suite_id WHERE b.status = 'open' AND c.status = 'active' AND s.state = 'enabled' "
                            "AND (SELECT COUNT(*) FROM bugs x WHERE x.test_case_id = c.test_case_id AND x.status = 'open') = 1 ORDER BY b.bug_id")
    bug = next(c for c in candidates if ok(env, call("get_bug", bug_id=c["bug_id"]))["test_latest_outcome"] != "passed")
    refused(env, call("close_bug", bug_id=bug["bug_id"]), "only fixed bugs can be closed")
    ok(env, call("mark_bug_fixed", bug_id=bug["bug_id"]))
    refused(env, call("close_bug", bug_id=bug["bug_id"]), "cannot be closed: the latest result")
    run = ok(env, call("run_suite", suite_id=bug["suite_id"]))
    if ok(env, call("get_test_case", test_case_id=bug["test_case_id"]))["latest_outcome"] != "passed":
        ok(env, call("rerun_flaky", run_id=run["run_id"]))  # a flaky test fails its first attempt only
    assert ok(env, call("close_bug", bug_id=bug["bug_id"]))["status"] == "closed"


def test_mlhub_rules():
    env = fresh("mlhub")
    job = row(env, "SELECT * FROM finetune_jobs WHERE status = 'succeeded' ORDER BY finetune_job_id")
    refused(env, f'update_job_status(finetune_job_id="{job["finetune_job_id"]}", status="running")', "finished")
    free = row(env, "SELECT m.model_id FROM models m JOIN teams t ON t.team_id = m.team_id WHERE t.plan = 'free' AND "
                    "(SELECT COUNT(*) FROM endpoints e WHERE e.model_id = m.model_id AND e.status = 'running') < 2 ORDER BY m.model_id")
    refused(env, call("deploy_model", model_id=free["model_id"], instance="gpu-h100"), "free plan")
    # the biggest fine-tune some team could otherwise run exceeds its remaining GPU hours
    combos = env.db.all("SELECT t.team_id, m.model_id, d.dataset_id, m.size_b * d.row_count / 2000000.0 AS hours FROM teams t "
                        "JOIN models m ON m.team_id = t.team_id JOIN datasets d ON d.status = 'ready' AND (d.team_id = t.team_id OR d.license != 'proprietary') "
                        "ORDER BY hours DESC, t.team_id, m.model_id, d.dataset_id")
    big = next(c for c in combos if c["hours"] > ok(env, call("get_team", team_id=c["team_id"]))["gpu_hours_left"])
    refused(env, call("start_finetune", team_id=big["team_id"], model_id=big["model_id"], dataset_id=big["dataset_id"]), "GPU quota exceeded")


def test_compute_rules_and_sql_statistics():
    env = fresh("compute")
    series = row(env, "SELECT s.* FROM series s JOIN datasets d ON d.dataset_id = s.dataset_id WHERE d.access = 'editable' AND s.unit = 'celsius' ORDER BY series_id")
    refused(env, f'convert_series(series_id="{series["series_id"]}", to_unit="pound")', "Cannot convert celsius")
    locked = row(env, "SELECT s.* FROM series s JOIN datasets d ON d.dataset_id = s.dataset_id WHERE d.access = 'locked' ORDER BY series_id")
    refused(env, call("add_observation", series_id=locked["series_id"], value=1.5, observed_date="2025-05-01"), "is locked")
    refused(env, call("add_observation", series_id=series["series_id"], value=1.5, observed_date="2025-07-01"), "after today")
    busy = row(env, "SELECT series_id FROM observations WHERE quality = 'ok' GROUP BY series_id ORDER BY COUNT(*) DESC, series_id")
    values = sorted(r["value"] for r in env.db.all("SELECT value FROM observations WHERE series_id = ? AND quality = 'ok'", (busy["series_id"],)))
    for stat, expected in (("median", statistics.median(values)), ("mean", statistics.fmean(values)), ("stdev", statistics.stdev(values))):
        got = ok(env, call("compute_statistic", series_id=busy["series_id"], statistic=stat))
        assert got["value"] == pytest.approx(expected, abs=1e-3) and got["sample_size"] == len(values)
    p90 = ok(env, call("compute_percentile", series_id=busy["series_id"], percentile=90))
    assert p90["value"] == values[math.ceil(0.9 * len(values)) - 1]


def test_music_rules():
    env = fresh("music")
    listener = row(env, "SELECT * FROM listeners WHERE plan = 'free' AND status = 'active' ORDER BY listener_id")
    track = row(env, "SELECT * FROM tracks WHERE tier = 'premium' ORDER BY track_id")
    refused(env, f'play_track(listener_id="{listener["listener_id"]}", track_id="{track["track_id"]}")', "premium-only")
    entry = row(env, "SELECT e.* FROM playlist_tracks e JOIN playlists p ON p.playlist_id = e.playlist_id JOIN listeners l ON l.listener_id = p.listener_id "
                     "JOIN tracks t ON t.track_id = e.track_id WHERE l.status = 'active' AND (t.tier = 'standard' OR l.plan != 'free') ORDER BY e.entry_id")
    refused(env, call("add_track_to_playlist", playlist_id=entry["playlist_id"], track_id=entry["track_id"]), "already in playlist")
    cancelled = row(env, "SELECT * FROM listeners WHERE status = 'cancelled' ORDER BY listener_id")
    refused(env, call("create_playlist", listener_id=cancelled["listener_id"], name="Later"), "has cancelled")


def test_docs_rules():
    env = fresh("docs")
    only = "d.status != 'archived' AND s.user_id != d.owner_user_id AND NOT EXISTS (SELECT 1 FROM shares x WHERE x.document_id = s.document_id " \
           "AND x.user_id = s.user_id AND x.role != s.role)"
    viewer = row(env, f"SELECT s.* FROM shares s JOIN documents d ON d.document_id = s.document_id WHERE s.role = 'viewer' AND {only} ORDER BY s.share_id")
    refused(env, f'edit_document(user_id="{viewer["user_id"]}", document_id="{viewer["document_id"]}", word_count=900)', "is only a viewer")
    editor = row(env, f"SELECT s.* FROM shares s JOIN documents d ON d.document_id = s.document_id WHERE s.role = 'editor' AND {only} ORDER BY s.share_id")
    other = row(env, "SELECT email FROM users WHERE user_id != ? ORDER BY user_id", (editor["user_id"],))
    refused(env, call("share_document", user_id=editor["user_id"], document_id=editor["document_id"], email=other["email"], role="viewer"),
            "you must be the owner")
    archived = row(env, "SELECT * FROM documents WHERE status = 'archived' ORDER BY document_id")
    refused(env, call("add_comment", user_id=archived["owner_user_id"], document_id=archived["document_id"], text="Hi"), "archived and read-only")
    # the editor can edit, which saves a new version
    before = env.db.value("SELECT COUNT(*) FROM versions WHERE document_id = ?", (editor["document_id"],))
    assert ok(env, call("edit_document", user_id=editor["user_id"], document_id=editor["document_id"], word_count=900))["version_count"] == before + 1


def test_security_rules():
    env = fresh("security")
    alert = row(env, "SELECT * FROM alerts WHERE incident_id IS NULL AND status != 'closed' AND severity != 'critical' ORDER BY alert_id")
    refused(env, f'escalate_alert(alert_id="{alert["alert_id"]}", severity="critical")', "link it to an open incident")
    high = row(env, "SELECT * FROM alerts WHERE severity = 'high' AND status != 'closed' ORDER BY alert_id")
    refused(env, call("escalate_alert", alert_id=high["alert_id"], severity="medium"), "can only be raised")
    closed = row(env, "SELECT * FROM incidents WHERE status = 'closed' ORDER BY incident_id")
    refused(env, call("close_incident", incident_id=closed["incident_id"]), "only open incidents can be closed")
    refused(env, call("link_alert", alert_id=alert["alert_id"], incident_id=closed["incident_id"]), "only to open incidents")
    dmz = row(env, "SELECT h.* FROM hosts h WHERE zone = 'dmz' ORDER BY host_id")
    refused(env, call("add_firewall_rule", host_id=dmz["host_id"], port=3389, action="allow", source="any"), "is in the DMZ")
    # linking to an open incident makes escalation to critical possible and raises the incident's severity
    incident = row(env, "SELECT * FROM incidents WHERE status = 'open' ORDER BY incident_id")
    ok(env, call("link_alert", alert_id=alert["alert_id"], incident_id=incident["incident_id"]))
    ok(env, call("escalate_alert", alert_id=alert["alert_id"], severity="critical"))
    assert ok(env, call("get_incident", incident_id=incident["incident_id"]))["severity"] == "critical"


# ------------------------------------------------------------------------------------------ env contracts and grading


@pytest.mark.parametrize("theme_id", THEMES)
def test_check_env_difficulties_1_to_3(theme_id):
    for difficulty in (1, 2, 3):
        check_env(gym.make(f"AgentWorld/{theme_id}-v0", difficulty=difficulty))


@pytest.mark.parametrize("theme_id", THEMES)
def test_oracle_scores_one_and_nothing_scores_zero(theme_id):
    env = fresh(theme_id)
    theme = get_theme(theme_id)
    kinds = set()
    for seed in range(TASKS_PER_THEME):
        task = synthesize_task(theme, difficulty=1 + seed % 5, seed=seed, fallback=True)  # as env.reset asks
        kinds.add(task.answer_type)
        result = run_episode(env, OraclePolicy(env), options={"task": task})
        assert result["reward"] == 1.0, (task.id, task.instruction, result["info"].get("verification"))
        env.reset(options={"task": task})
        _, reward, terminated, _, _ = env.step('submit(answer="__nothing__")')
        assert terminated and reward == 0.0, task.id
    # answer tasks occur (both kinds in most themes; where every count is one a guesser tries, e.g. the
    # testing theme's 9-13 runs per list, the answer prior rejects them and only text answers are asked)
    assert kinds & {"number", "text"}
