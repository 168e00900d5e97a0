"""github: a code-hosting service's users, repositories, collaborators, issues, pull requests and reviews."""

from __future__ import annotations

from typing import Literal

from agentworld_gym.theme import Theme
from agentworld_gym.tools import WRITE, Db, ToolError, tool
from agentworld_gym.world import Column, Table, ThemeSpec, choice_col, date_col, faker_col, fk_col, id_col, int_col

PERMISSIONS = ("read", "triage", "write", "maintain", "admin")  # in rising order
LABELS = ("bug", "enhancement", "documentation", "question", "good first issue")
LANGUAGES = ("Python", "TypeScript", "Go", "Rust", "Java")
VERDICTS = ("approved", "changes requested", "commented")
TITLES = ["Crash when the config file is empty", "Add a --verbose flag", "Document the release process",
          "Flaky test on Windows", "Support Python 3.13"]

SPEC = ThemeSpec(
    id="github",
    title="Forgehub",
    category="Software Development",
    subcategory="Code Execution & Analysis",
    label="code hosting: issues, pull requests and reviews",
    description="You help developers with repositories, issues, labels, pull requests, reviews and merges.",
    tables=(
        Table("users", (
            id_col("user_id", "US-"), Column("login", "faker", "user_name", unique=True), faker_col("name", "name"),
            faker_col("email", "email", unique=True), date_col("joined", "2015-01-01", "2025-03-31"),
        ), rows=30),
        Table("repos", (
            id_col("repo_id", "RP-", 201), Column("name", "faker", "slug", unique=True), fk_col("owner_id", "users"),
            choice_col("visibility", ["public", "private"], [0.7, 0.3]), choice_col("language", LANGUAGES),
            int_col("stars", 0, 5000), choice_col("status", ["active", "archived"], [0.9, 0.1]),
        ), rows=12),
        Table("collaborators", (
            id_col("collaborator_id", "CB-", 401), fk_col("repo_id", "repos"), fk_col("user_id", "users"),
            choice_col("permission", PERMISSIONS, [0.25, 0.2, 0.35, 0.1, 0.1]),
        ), rows=90),
        Table("issues", (
            id_col("issue_id", "IS-", 1001), fk_col("repo_id", "repos"), Column("title", "faker", ("sentence", 6)),
            fk_col("author_id", "users"), choice_col("state", ["open", "closed"], [0.6, 0.4]),
            choice_col("label", LABELS, [0.35, 0.3, 0.15, 0.1, 0.1]), date_col("opened", "2024-06-01", "2025-05-31"),
        ), rows=120),
        Table("pull_requests", (
            id_col("pull_request_id", "PR-", 3001), fk_col("repo_id", "repos"), Column("title", "faker", ("sentence", 5)),
            fk_col("author_id", "users"), choice_col("state", ["open", "merged", "closed"], [0.5, 0.4, 0.1]),
            choice_col("checks", ["passing", "failing", "pending"], [0.65, 0.2, 0.15]), date_col("opened", "2025-01-01", "2025-05-31"),
        ), rows=70),
        Table("reviews", (
            id_col("review_id", "RV-", 6001), fk_col("pull_request_id", "pull_requests"), fk_col("reviewer_id", "users"),
            choice_col("verdict", VERDICTS, [0.5, 0.2, 0.3]), date_col("submitted", "2025-01-01", "2025-05-31"),
        ), rows=110),
    ),
    rules=(
        "Permissions rise read < triage < write < maintain < admin; a repository's owner has admin rights.",
        "Labelling or closing an issue needs triage rights (an issue's author may also close it); opening one needs read rights.",
        "A pull request can be merged only while open, with passing checks, at least one approval from someone other than its author "
        "and no reviewer whose latest review requests changes; merging needs write rights.",
        "Nobody reviews their own pull request; reviewing needs read rights. Archived repositories are read-only.",
    ),
)


def _permission(db: Db, repo: dict, user_id: str) -> str | None:
    """The user's highest permission on the repository (owner = admin), or None."""
    if repo["owner_id"] == user_id:
        return "admin"
    rows = db.all("SELECT permission FROM collaborators WHERE repo_id = ? AND user_id = ? ORDER BY collaborator_id", (repo["repo_id"], user_id))
    return max((r["permission"] for r in rows), key=PERMISSIONS.index, default=None)


def _require(db: Db, repo: dict, user_id: str, needed: str, action: str) -> None:
    db.get("users", user_id, "User")
    if repo["status"] == "archived":
        raise ToolError(f"Repository {repo['repo_id']} is archived and read-only.")
    have = _permission(db, repo, user_id)
    if have is None or PERMISSIONS.index(have) < PERMISSIONS.index(needed):
        raise ToolError(f"User {user_id} has {have or 'no'} access to repository {repo['repo_id']}; {action} needs {needed} rights.")


def _latest_verdicts(db: Db, pull_request_id: str) -> dict[str, str]:
    rows = db.all("SELECT reviewer_id, verdict FROM reviews WHERE pull_request_id = ? ORDER BY submitted, review_id", (pull_request_id,))
    latest: dict[str, str] = {}
    for r in rows:
        if r["verdict"] != "commented":  # comments do not change a reviewer's standing verdict
            latest[r["reviewer_id"]] = r["verdict"]
    return latest


@tool(produces=("user_id",), phrase="find the user with login {login}")
def find_user_by_login(db: Db, login: str) -> dict:
    """Find a user by their login name.

    Args:
        login: The login, e.g. "octo42".
    """
    row = db.one("SELECT * FROM users WHERE lower(login) = lower(?)", (login.strip().lstrip("@"),))
    if row is None:
        raise ToolError(f"No user with login {login!r}.")
    return row


@tool(produces=("repo_id",), phrase="list the {language} repositories")
def list_repos(db: Db, language: Literal[LANGUAGES] | None = None) -> list:
    """List repositories, most starred first.

    Args:
        language: Only repositories in this language.
    """
    sql, params = "SELECT * FROM repos", []
    if language:
        sql, params = sql + " WHERE language = ?", [language]
    return db.all(sql + " ORDER BY stars DESC, repo_id", params)


@tool(produces=("repo_id",), phrase="look up {repo_id}")
def get_repo(db: Db, repo_id: str) -> dict:
    """Get a repository with its owner's login and counts of open issues and pull requests.

    Args:
        repo_id: The repository id, e.g. "RP-201".
    """
    repo = db.get("repos", repo_id, "Repository")
    owner = db.get("users", repo["owner_id"])["login"]
    issues = db.value("SELECT COUNT(*) FROM issues WHERE repo_id = ? AND state = 'open'", (repo_id,))
    pulls = db.value("SELECT COUNT(*) FROM pull_requests WHERE repo_id = ? AND state = 'open'", (repo_id,))
    return {**repo, "owner_login": owner, "open_issues": issues, "open_pull_requests": pulls}


@tool(produces=("repo_id", "user_id"), phrase="check what access {user_id} has to {repo_id}")
def get_permission(db: Db, repo_id: str, user_id: str) -> dict:
    """A user's permission level on a repository: admin for its owner, else the highest level granted to them as a
    collaborator ("none" when they have no access).

    Args:
        repo_id: The repository id.
        user_id: The user id.
    """
    repo = db.get("repos", repo_id, "Repository")
    db.get("users", user_id, "User")
    return {"repo_id": repo_id, "user_id": user_id, "permission": _permission(db, repo, user_id) or "none",
            "is_owner": repo["owner_id"] == user_id}


@tool(produces=("issue_id", "repo_id"), phrase="list the {state} {label} issues of {repo_id}")
def list_issues(db: Db, repo_id: str, state: Literal["open", "closed"] | None = None, label: Literal[LABELS] | None = None) -> list:
    """List a repository's issues, newest first.

    Args:
        repo_id: The repository id.
        state: Only open or only closed issues.
        label: Only issues with this label.
    """
    db.get("repos", repo_id, "Repository")
    sql, params = "SELECT * FROM issues WHERE repo_id = ?", [repo_id]
    if state:
        sql, params = sql + " AND state = ?", params + [state]
    if label:
        sql, params = sql + " AND label = ?", params + [label]
    return db.all(sql + " ORDER BY opened DESC, issue_id DESC", params)


@tool(produces=("issue_id", "repo_id"), phrase="look up {issue_id}")
def get_issue(db: Db, issue_id: str) -> dict:
    """Get an issue with its author's login.

    Args:
        issue_id: The issue id, e.g. "IS-1001".
    """
    issue = db.get("issues", issue_id, "Issue")
    return {**issue, "author_login": db.get("users", issue["author_id"])["login"]}


@tool(produces=("pull_request_id", "repo_id"), phrase="list the {state} pull requests of {repo_id}")
def list_pull_requests(db: Db, repo_id: str, state: Literal["open", "merged", "closed"] | None = None) -> list:
    """List a repository's pull requests, newest first.

    Args:
        repo_id: The repository id.
        state: Only pull requests in this state.
    """
    db.get("repos", repo_id, "Repository")
    sql, params = "SELECT * FROM pull_requests WHERE repo_id = ?", [repo_id]
    if state:
        sql, params = sql + " AND state = ?", params + [state]
    return db.all(sql + " ORDER BY opened DESC, pull_request_id DESC", params)


@tool(produces=("pull_request_id", "repo_id"), phrase="look up {pull_request_id}")
def get_pull_request(db: Db, pull_request_id: str) -> dict:
    """Get a pull request with its reviews and whether it can be merged now.

    Args:
        pull_request_id: The pull request id, e.g. "PR-3001".
    """
    pr = db.get("pull_requests", pull_request_id, "Pull request")
    reviews = db.all("SELECT review_id, reviewer_id, verdict, submitted FROM reviews WHERE pull_request_id = ? ORDER BY submitted, review_id",
                     (pull_request_id,))
    latest = _latest_verdicts(db, pull_request_id)
    approvals = sum(1 for u, v in latest.items() if v == "approved" and u != pr["author_id"])
    blocked = sum(1 for v in latest.values() if v == "changes requested")
    mergeable = pr["state"] == "open" and pr["checks"] == "passing" and approvals > 0 and blocked == 0
    return {**pr, "approvals": approvals, "change_requests": blocked, "mergeable": mergeable, "reviews": reviews}


@tool(mode=WRITE, produces=("issue_id", "repo_id"), phrase="as {user_id}, open an issue in {repo_id} titled '{title}'",
      examples={"title": TITLES})
def open_issue(db: Db, repo_id: str, user_id: str, title: str) -> dict:
    """Open a new issue in a repository.

    Args:
        repo_id: The repository id.
        user_id: The user opening the issue.
        title: The issue title.
    """
    repo = db.get("repos", repo_id, "Repository")
    _require(db, repo, user_id, "read", "opening an issue")
    if not title.strip():
        raise ToolError("The title must not be empty.")
    issue_id = db.next_id("issues", "IS-", 1001)
    db.insert("issues", {"issue_id": issue_id, "repo_id": repo_id, "title": title.strip(), "author_id": user_id, "state": "open",
                         "label": None, "opened": db.now[:10]})
    return {"issue_id": issue_id, "repo_id": repo_id, "state": "open"}


@tool(mode=WRITE, produces=("issue_id",), phrase="as {user_id}, label {issue_id} as {label}")
def label_issue(db: Db, issue_id: str, user_id: str, label: Literal[LABELS]) -> dict:
    """Set an issue's label (needs triage rights).

    Args:
        issue_id: The issue id.
        user_id: The user doing it.
        label: The new label.
    """
    issue = db.get("issues", issue_id, "Issue")
    _require(db, db.get("repos", issue["repo_id"]), user_id, "triage", "labelling")
    if issue["label"] == label:
        raise ToolError(f"Issue {issue_id} is already labelled {label}.")
    db.update("issues", issue_id, label=label)
    return {"issue_id": issue_id, "label": label, "previous_label": issue["label"]}


@tool(mode=WRITE, produces=("issue_id",), phrase="as {user_id}, close {issue_id}")
def close_issue(db: Db, issue_id: str, user_id: str) -> dict:
    """Close an open issue (its author or anyone with triage rights).

    Args:
        issue_id: The issue id.
        user_id: The user doing it.
    """
    issue = db.get("issues", issue_id, "Issue")
    repo = db.get("repos", issue["repo_id"])
    if issue["state"] != "open":
        raise ToolError(f"Issue {issue_id} is already {issue['state']}.")
    if issue["author_id"] == user_id and repo["status"] == "active":
        pass  # authors may close their own issues
    else:
        _require(db, repo, user_id, "triage", "closing someone else's issue")
    db.update("issues", issue_id, state="closed")
    return {"issue_id": issue_id, "state": "closed", "label": issue["label"]}


@tool(mode=WRITE, produces=("review_id", "pull_request_id"), phrase="as {user_id}, review {pull_request_id} with the verdict {verdict}")
def review_pull_request(db: Db, pull_request_id: str, user_id: str, verdict: Literal[VERDICTS]) -> dict:
    """Submit a review on an open pull request.

    Args:
        pull_request_id: The pull request id.
        user_id: The reviewer.
        verdict: The review's verdict.
    """
    pr = db.get("pull_requests", pull_request_id, "Pull request")
    if pr["state"] != "open":
        raise ToolError(f"Pull request {pull_request_id} is {pr['state']}; only open pull requests can be reviewed.")
    if pr["author_id"] == user_id:
        raise ToolError(f"User {user_id} wrote pull request {pull_request_id} and cannot review it.")
    _require(db, db.get("repos", pr["repo_id"]), user_id, "read", "reviewing")
    review_id = db.next_id("reviews", "RV-", 6001)
    db.insert("reviews", {"review_id": review_id, "pull_request_id": pull_request_id, "reviewer_id": user_id, "verdict": verdict,
                          "submitted": db.now[:10]})
    return {"review_id": review_id, "pull_request_id": pull_request_id, "verdict": verdict}


@tool(mode=WRITE, produces=("pull_request_id",), phrase="as {user_id}, merge {pull_request_id}")
def merge_pull_request(db: Db, pull_request_id: str, user_id: str) -> dict:
    """Merge an open, approved pull request whose checks pass (needs write rights).

    Args:
        pull_request_id: The pull request id.
        user_id: The user merging it.
    """
    pr = db.get("pull_requests", pull_request_id, "Pull request")
    _require(db, db.get("repos", pr["repo_id"]), user_id, "write", "merging")
    if pr["state"] != "open":
        raise ToolError(f"Pull request {pull_request_id} is {pr['state']}.")
    if pr["checks"] != "passing":
        raise ToolError(f"Pull request {pull_request_id} has {pr['checks']} checks; they must pass before merging.")
    latest = _latest_verdicts(db, pull_request_id)
    blockers = sorted(u for u, v in latest.items() if v == "changes requested")
    if blockers:
        raise ToolError(f"Pull request {pull_request_id} has changes requested by {', '.join(blockers)}.")
    if not any(v == "approved" and u != pr["author_id"] for u, v in latest.items()):
        raise ToolError(f"Pull request {pull_request_id} has no approving review yet.")
    db.update("pull_requests", pull_request_id, state="merged")
    return {"pull_request_id": pull_request_id, "state": "merged", "merged_by": user_id}


THEME = Theme(SPEC, [find_user_by_login, list_repos, get_repo, get_permission, list_issues, get_issue, list_pull_requests,
                     get_pull_request, open_issue, label_issue, close_issue, review_pull_request, merge_pull_request])
