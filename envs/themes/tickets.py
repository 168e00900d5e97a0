"""tickets: a team's project and ticket tracker: members, projects, memberships, tickets and comments."""

from __future__ import annotations

from typing import Literal

from agentworld_gym.theme import Theme
from agentworld_gym.tools import WRITE, Db, ToolError, tool
from agentworld_gym.world import Column, Table, ThemeSpec, choice_col, date_col, faker_col, fk_col, id_col, int_col

STATUSES = ("open", "in progress", "review", "done")
PRIORITIES = ("low", "medium", "high", "urgent")
# The workflow: one step forward at a time, or back from review to in progress when changes are needed.
NEXT = {"open": ("in progress",), "in progress": ("review",), "review": ("done", "in progress"), "done": ()}

SPEC = ThemeSpec(
    id="tickets",
    title="Trackwise",
    category="Reasoning & Decision Support",
    subcategory="Structured Thinking & Planning",
    label="project & ticket tracking",
    description="You help a software team plan work: projects, their members, tickets and the ticket workflow.",
    tables=(
        Table("members", (
            id_col("member_id", "MB-"), faker_col("name", "name"), faker_col("email", "email", unique=True),
            choice_col("role", ["developer", "designer", "qa", "manager"], [0.55, 0.15, 0.2, 0.1]),
            date_col("joined", "2021-01-01", "2025-04-30"),
        ), rows=30),
        Table("projects", (
            id_col("project_id", "PJ-", 101), Column("name", "faker", "catch_phrase", unique=True),
            choice_col("status", ["active", "archived"], [0.85, 0.15]), int_col("wip_limit", 2, 4),
            date_col("started", "2023-01-01", "2025-03-31"),
        ), rows=8),
        Table("memberships", (
            id_col("membership_id", "MS-", 5001), fk_col("project_id", "projects"), fk_col("member_id", "members"),
            date_col("since", "2023-01-01", "2025-05-31"),
        ), rows=70),
        Table("tickets", (
            id_col("ticket_id", "TK-", 2001), fk_col("project_id", "projects"), Column("title", "faker", ("sentence", 5)),
            Column("assignee_id", "fk", "members", nullable_share=0.2),
            choice_col("status", STATUSES, [0.35, 0.2, 0.15, 0.3]), choice_col("priority", PRIORITIES, [0.3, 0.4, 0.2, 0.1]),
            choice_col("points", [1, 2, 3, 5, 8], type="int"), date_col("created", "2025-03-01", "2025-05-31"),
        ), rows=120),
        Table("comments", (
            id_col("comment_id", "CM-", 7001), fk_col("ticket_id", "tickets"), fk_col("member_id", "members"),
            Column("body", "faker", ("sentence", 10)), date_col("created", "2025-03-01", "2025-05-31"),
        ), rows=150),
    ),
    rules=(
        "Tickets move open -> in progress -> review -> done, one step at a time; review can go back to in progress; done is final.",
        "A ticket can only be assigned to a member of its project, and only an assigned ticket can move to in progress.",
        "Each project has a work-in-progress limit: nobody may hold more tickets in progress in that project than the limit.",
        "Archived projects are read-only, and only project members may comment on a project's tickets.",
    ),
)


def _is_member(db: Db, project_id: str, member_id: str) -> bool:
    return bool(db.value("SELECT COUNT(*) FROM memberships WHERE project_id = ? AND member_id = ?", (project_id, member_id)))


def _active_project(db: Db, project_id: str) -> dict:
    project = db.get("projects", project_id, "Project")
    if project["status"] != "active":
        raise ToolError(f"Project {project_id} is {project['status']} and read-only.")
    return project


def _check_wip(db: Db, project: dict, member_id: str, ticket_id: str) -> None:
    held = db.value("SELECT COUNT(*) FROM tickets WHERE project_id = ? AND assignee_id = ? AND status = 'in progress' AND ticket_id != ?",
                    (project["project_id"], member_id, ticket_id))
    if held >= project["wip_limit"]:
        raise ToolError(f"Member {member_id} already has {held} tickets in progress in project {project['project_id']} "
                        f"(limit {project['wip_limit']}); finish one first.")


@tool(produces=("member_id",), phrase="find the team member whose email is {email}")
def find_member_by_email(db: Db, email: str) -> dict:
    """Find a team member by their email address.

    Args:
        email: The member's email address.
    """
    row = db.one("SELECT * FROM members WHERE lower(email) = lower(?)", (email.strip(),))
    if row is None:
        raise ToolError(f"No member with email {email!r}.")
    return row


@tool(produces=("member_id",), phrase="look up {member_id}")
def get_member(db: Db, member_id: str) -> dict:
    """Get a member's profile, the projects they belong to and how many tickets they hold open.

    Args:
        member_id: The member id, e.g. "MB-1001".
    """
    member = db.get("members", member_id, "Member")
    projects = [r["project_id"] for r in db.all(
        "SELECT DISTINCT project_id FROM memberships WHERE member_id = ? ORDER BY project_id", (member_id,))]
    held = db.value("SELECT COUNT(*) FROM tickets WHERE assignee_id = ? AND status != 'done'", (member_id,))
    return {**member, "project_ids": projects, "project_count": len(projects), "open_assigned": held}


@tool(produces=("project_id",), phrase="list the {status} projects")
def list_projects(db: Db, status: Literal["active", "archived"] | None = None) -> list:
    """List the projects, optionally only active or archived ones.

    Args:
        status: Only projects with this status.
    """
    sql, params = "SELECT * FROM projects", []
    if status:
        sql, params = sql + " WHERE status = ?", [status]
    return db.all(sql + " ORDER BY project_id", params)


@tool(produces=("project_id",), phrase="look up {project_id}")
def get_project(db: Db, project_id: str) -> dict:
    """Get a project with its member ids and how many tickets it has in each status.

    Args:
        project_id: The project id, e.g. "PJ-101".
    """
    project = db.get("projects", project_id, "Project")
    members = [r["member_id"] for r in db.all(
        "SELECT DISTINCT member_id FROM memberships WHERE project_id = ? ORDER BY member_id", (project_id,))]
    counts = {s: 0 for s in STATUSES}
    for r in db.all("SELECT status, COUNT(*) AS n FROM tickets WHERE project_id = ? GROUP BY status ORDER BY status", (project_id,)):
        counts[r["status"]] = r["n"]
    return {**project, "member_ids": members, "member_count": len(members), "open_tickets": counts["open"],
            "tickets_in_progress": counts["in progress"], "tickets_in_review": counts["review"], "tickets_done": counts["done"]}


@tool(produces=("ticket_id", "project_id"), phrase="list the {priority} {status} tickets of {project_id}")
def list_tickets(db: Db, project_id: str, status: Literal[STATUSES] | None = None, priority: Literal[PRIORITIES] | None = None) -> list:
    """List a project's tickets, optionally filtered by status and priority.

    Args:
        project_id: The project id.
        status: Only tickets in this status.
        priority: Only tickets with this priority.
    """
    db.get("projects", project_id, "Project")
    sql, params = "SELECT * FROM tickets WHERE project_id = ?", [project_id]
    if status:
        sql, params = sql + " AND status = ?", params + [status]
    if priority:
        sql, params = sql + " AND priority = ?", params + [priority]
    return db.all(sql + " ORDER BY ticket_id", params)


@tool(produces=("ticket_id", "project_id"), phrase="look up {ticket_id}")
def get_ticket(db: Db, ticket_id: str) -> dict:
    """Get a ticket with its comments, oldest first.

    Args:
        ticket_id: The ticket id, e.g. "TK-2001".
    """
    ticket = db.get("tickets", ticket_id, "Ticket")
    comments = db.all("SELECT comment_id, member_id, body, created FROM comments WHERE ticket_id = ? ORDER BY created, comment_id", (ticket_id,))
    return {**ticket, "comment_count": len(comments), "comments": comments}


@tool(produces=("ticket_id", "project_id"), phrase="list the {status} tickets assigned to {member_id}")
def list_assigned_tickets(db: Db, member_id: str, status: Literal[STATUSES] | None = None) -> list:
    """List the tickets assigned to a member across projects.

    Args:
        member_id: The member id.
        status: Only tickets in this status.
    """
    db.get("members", member_id, "Member")
    sql, params = "SELECT * FROM tickets WHERE assignee_id = ?", [member_id]
    if status:
        sql, params = sql + " AND status = ?", params + [status]
    return db.all(sql + " ORDER BY project_id, ticket_id", params)


@tool(mode=WRITE, produces=("ticket_id", "project_id"), phrase="open a {priority}-priority ticket in {project_id} titled '{title}'",
      examples={"title": ["Fix login timeout", "Add dark mode toggle", "Update onboarding copy", "Speed up search results",
                          "Remove unused feature flags"]})
def create_ticket(db: Db, project_id: str, title: str, priority: Literal[PRIORITIES]) -> dict:
    """Open a new, unassigned ticket in an active project.

    Args:
        project_id: The project id.
        title: A short title.
        priority: How urgent the ticket is.
    """
    _active_project(db, project_id)
    if not title.strip():
        raise ToolError("The title must not be empty.")
    ticket_id = db.next_id("tickets", "TK-", 2001)
    db.insert("tickets", {"ticket_id": ticket_id, "project_id": project_id, "title": title.strip(), "assignee_id": None,
                          "status": "open", "priority": priority, "points": 1, "created": db.now[:10]})
    return {"ticket_id": ticket_id, "project_id": project_id, "status": "open", "priority": priority}


@tool(mode=WRITE, produces=("ticket_id", "member_id"), phrase="assign {ticket_id} to {member_id}")
def assign_ticket(db: Db, ticket_id: str, member_id: str) -> dict:
    """Assign a ticket that is not done to a member of its project.

    Args:
        ticket_id: The ticket id.
        member_id: The member to assign.
    """
    ticket = db.get("tickets", ticket_id, "Ticket")
    db.get("members", member_id, "Member")
    project = _active_project(db, ticket["project_id"])
    if ticket["status"] == "done":
        raise ToolError(f"Ticket {ticket_id} is done and cannot be reassigned.")
    if ticket["assignee_id"] == member_id:
        raise ToolError(f"Ticket {ticket_id} is already assigned to {member_id}.")
    if not _is_member(db, ticket["project_id"], member_id):
        raise ToolError(f"Member {member_id} is not a member of project {ticket['project_id']}.")
    if ticket["status"] == "in progress":
        _check_wip(db, project, member_id, ticket_id)
    db.update("tickets", ticket_id, assignee_id=member_id)
    return {"ticket_id": ticket_id, "member_id": member_id, "previous_assignee": ticket["assignee_id"], "status": ticket["status"]}


@tool(mode=WRITE, produces=("ticket_id",), phrase="move {ticket_id} to {status}")
def move_ticket(db: Db, ticket_id: str, status: Literal["in progress", "review", "done"]) -> dict:
    """Move a ticket to the next workflow status.

    Args:
        ticket_id: The ticket id.
        status: The new status.
    """
    ticket = db.get("tickets", ticket_id, "Ticket")
    project = _active_project(db, ticket["project_id"])
    if status not in NEXT[ticket["status"]]:
        allowed = " or ".join(NEXT[ticket["status"]]) or "nothing (it is final)"
        raise ToolError(f"Ticket {ticket_id} cannot move from {ticket['status']} to {status}; it can move to {allowed}.")
    if status == "in progress":
        if ticket["assignee_id"] is None:
            raise ToolError(f"Ticket {ticket_id} has no assignee; assign it before starting work.")
        _check_wip(db, project, ticket["assignee_id"], ticket_id)
    db.update("tickets", ticket_id, status=status)
    return {"ticket_id": ticket_id, "previous_status": ticket["status"], "status": status}


@tool(mode=WRITE, produces=("comment_id", "ticket_id"), phrase="as {member_id}, comment on {ticket_id}: {body}",
      examples={"body": ["Can you add steps to reproduce?", "Blocked on the API change.", "Ready for another look.",
                         "I can take this next sprint."]})
def add_comment(db: Db, ticket_id: str, member_id: str, body: str) -> dict:
    """Add a comment to a ticket as a member of its project.

    Args:
        ticket_id: The ticket id.
        member_id: The member writing the comment.
        body: The comment text.
    """
    ticket = db.get("tickets", ticket_id, "Ticket")
    db.get("members", member_id, "Member")
    _active_project(db, ticket["project_id"])
    if not _is_member(db, ticket["project_id"], member_id):
        raise ToolError(f"Member {member_id} is not a member of project {ticket['project_id']} and cannot comment there.")
    if not body.strip():
        raise ToolError("The comment must not be empty.")
    comment_id = db.next_id("comments", "CM-", 7001)
    db.insert("comments", {"comment_id": comment_id, "ticket_id": ticket_id, "member_id": member_id, "body": body.strip(),
                           "created": db.now[:10]})
    count = db.value("SELECT COUNT(*) FROM comments WHERE ticket_id = ?", (ticket_id,))
    return {"comment_id": comment_id, "ticket_id": ticket_id, "comment_count": count}


@tool(mode=WRITE, produces=("membership_id", "project_id", "member_id"), phrase="add {member_id} to {project_id}")
def add_project_member(db: Db, project_id: str, member_id: str) -> dict:
    """Add a member to an active project; returns the new membership and the project's member count.

    Args:
        project_id: The project id.
        member_id: The member to add.
    """
    _active_project(db, project_id)
    db.get("members", member_id, "Member")
    if _is_member(db, project_id, member_id):
        raise ToolError(f"Member {member_id} is already in project {project_id}.")
    membership_id = db.next_id("memberships", "MS-", 5001)
    db.insert("memberships", {"membership_id": membership_id, "project_id": project_id, "member_id": member_id, "since": db.now[:10]})
    size = db.value("SELECT COUNT(DISTINCT member_id) FROM memberships WHERE project_id = ?", (project_id,))
    return {"membership_id": membership_id, "project_id": project_id, "member_id": member_id, "member_count": size}


THEME = Theme(SPEC, [find_member_by_email, get_member, list_projects, get_project, list_tickets, get_ticket, list_assigned_tickets,
                     create_ticket, assign_ticket, move_ticket, add_comment, add_project_member])
