"""social: a social network: users, follows, blocks, posts, comments and moderation reports."""

from __future__ import annotations

from typing import Literal

from agentworld_gym.theme import Theme
from agentworld_gym.tools import WRITE, Db, ToolError, tool
from agentworld_gym.world import Table, ThemeSpec, choice_col, date_col, faker_col, fk_col, id_col, int_col

MAX_POST_LENGTH = 280
REASONS = ["spam", "harassment", "misinformation", "impersonation"]
Reason = Literal["spam", "harassment", "misinformation", "impersonation"]
POST_EXAMPLES = ["Just finished my first half marathon!", "Anyone know a good coffee place downtown?",
                 "Big news coming next week, stay tuned.", "The sunset tonight was unreal.", "Reading a great book on city history."]

SPEC = ThemeSpec(
    id="social",
    title="Chirp",
    category="Social Media & Community",
    subcategory="Social Network Integration",
    label="social network",
    description="You act on behalf of Chirp users and its moderators: posting, following, commenting and handling reports.",
    tables=(
        Table("users", (
            id_col("user_id", "US-"), faker_col("handle", "user_name", unique=True), faker_col("name", "name"), faker_col("city", "city"),
            choice_col("privacy", ["public", "private"], [0.75, 0.25]), choice_col("status", ["active", "suspended"], [0.93, 0.07]),
            date_col("joined_date", "2018-01-01", "2025-04-30"),
        ), rows=60),
        Table("follows", (
            id_col("follow_id", "FW-", 2001), fk_col("follower_user_id", "users"), fk_col("followee_user_id", "users"),
            choice_col("status", ["accepted", "pending"], [0.85, 0.15]), date_col("created_date", "2023-01-01", "2025-05-31"),
        ), rows=200),
        Table("blocks", (
            id_col("block_id", "BK-", 3001), fk_col("blocker_user_id", "users"), fk_col("blocked_user_id", "users"),
            date_col("created_date", "2024-01-01", "2025-05-31"),
        ), rows=15),
        Table("posts", (
            id_col("post_id", "PO-", 5001), fk_col("author_user_id", "users"), faker_col("text", ("sentence", 12)),
            choice_col("audience", ["public", "followers"], [0.7, 0.3]), int_col("like_count", 0, 500),
            date_col("created_date", "2025-01-01", "2025-05-31"), choice_col("status", ["visible", "hidden", "removed"], [0.9, 0.07, 0.03]),
        ), rows=180),
        Table("comments", (
            id_col("comment_id", "CM-", 7001), fk_col("post_id", "posts"), fk_col("author_user_id", "users"),
            faker_col("text", ("sentence", 8)), date_col("created_date", "2025-01-01", "2025-05-31"),
        ), rows=150),
        Table("reports", (
            id_col("report_id", "RP-", 9001), fk_col("post_id", "posts"), fk_col("reporter_user_id", "users"),
            choice_col("reason", REASONS), choice_col("status", ["open", "upheld", "dismissed"], [0.5, 0.25, 0.25]),
            date_col("created_date", "2025-03-01", "2025-05-31"),
        ), rows=30),
    ),
    rules=(
        f"Posts and comments must be 1 to {MAX_POST_LENGTH} characters long.",
        "Suspended users cannot post, comment, follow, block or report.",
        "Nobody can follow, comment on or interact with a user who has blocked them, or whom they have blocked.",
        "Following a private account creates a pending request; following a public account is accepted at once.",
        "Followers-only posts, and every post of a private account, can be commented on only by the author and accepted followers.",
        "Users cannot report their own posts or report the same post twice; only open reports can be resolved, and upholding one hides the post.",
    ),
)


def _user(db: Db, user_id: str) -> dict:
    return db.get("users", user_id, "User")


def _active_user(db: Db, user_id: str) -> dict:
    user = _user(db, user_id)
    if user["status"] != "active":
        raise ToolError(f"User {user_id} is suspended and cannot do this.")
    return user


def _by_handle(db: Db, handle: str) -> dict:
    row = db.one("SELECT * FROM users WHERE lower(handle) = lower(?) ORDER BY user_id LIMIT 1", (handle.strip().lstrip("@"),))
    if row is None:
        raise ToolError(f"No user with handle {handle!r}.")
    return row


def _blocked(db: Db, a: str, b: str) -> bool:
    return db.value("SELECT COUNT(*) FROM blocks WHERE (blocker_user_id = ? AND blocked_user_id = ?) OR (blocker_user_id = ? AND blocked_user_id = ?)",
                    (a, b, b, a)) > 0


def _follow_status(db: Db, follower: str, followee: str) -> str | None:
    return db.value("SELECT status FROM follows WHERE follower_user_id = ? AND followee_user_id = ? ORDER BY status, follow_id LIMIT 1", (follower, followee))


def _check_text(text: str, what: str) -> str:
    text = text.strip()
    if not text:
        raise ToolError(f"A {what} cannot be empty.")
    if len(text) > MAX_POST_LENGTH:
        raise ToolError(f"A {what} can be at most {MAX_POST_LENGTH} characters, got {len(text)}.")
    return text


@tool(produces=("user_id",), phrase="look up {user_id}")
def get_user(db: Db, user_id: str) -> dict:
    """Get a user's profile with follower, following and post counts.

    Args:
        user_id: The user id, e.g. "US-1001".
    """
    user = _user(db, user_id)
    user["follower_count"] = db.value("SELECT COUNT(*) FROM follows WHERE followee_user_id = ? AND status = 'accepted'", (user_id,))
    user["following_count"] = db.value("SELECT COUNT(*) FROM follows WHERE follower_user_id = ? AND status = 'accepted'", (user_id,))
    user["post_count"] = db.value("SELECT COUNT(*) FROM posts WHERE author_user_id = ? AND status = 'visible'", (user_id,))
    return user


@tool(produces=("user_id",), phrase="find the account with the handle @{handle}")
def find_user_by_handle(db: Db, handle: str) -> dict:
    """Find a user by their handle.

    Args:
        handle: The handle, with or without the leading @.
    """
    return _by_handle(db, handle)


@tool(produces=("post_id", "user_id"), phrase="list the posts of {user_id}")
def list_user_posts(db: Db, user_id: str) -> list:
    """List a user's visible posts, newest first.

    Args:
        user_id: The author's user id.
    """
    _user(db, user_id)
    return db.all("SELECT post_id, author_user_id, text, audience, like_count, created_date FROM posts WHERE author_user_id = ? AND status = 'visible' "
                  "ORDER BY created_date DESC, post_id DESC", (user_id,))


@tool(produces=("post_id", "user_id"), phrase="open {post_id}")
def get_post(db: Db, post_id: str) -> dict:
    """Get a post with its author, audience, likes, status, and its comment and report counts.

    Args:
        post_id: The post id, e.g. "PO-5001".
    """
    post = db.get("posts", post_id, "Post")
    post["comment_count"] = db.value("SELECT COUNT(*) FROM comments WHERE post_id = ?", (post_id,))
    post["open_reports"] = db.value("SELECT COUNT(*) FROM reports WHERE post_id = ? AND status = 'open'", (post_id,))
    return post


@tool(produces=("comment_id", "user_id"), phrase="read the comments on {post_id}")
def list_comments(db: Db, post_id: str) -> list:
    """List the comments on a post, oldest first.

    Args:
        post_id: The post id.
    """
    db.get("posts", post_id, "Post")
    return db.all("SELECT comment_id, author_user_id, text, created_date FROM comments WHERE post_id = ? ORDER BY created_date, comment_id", (post_id,))


@tool(produces=("user_id", "follow_id"), phrase="list the followers of {user_id}")
def list_followers(db: Db, user_id: str) -> list:
    """List a user's accepted followers, most recent first.

    Args:
        user_id: The user id.
    """
    _user(db, user_id)
    return db.all("SELECT f.follow_id, f.follower_user_id, u.handle, f.created_date FROM follows f JOIN users u ON u.user_id = f.follower_user_id "
                  "WHERE f.followee_user_id = ? AND f.status = 'accepted' ORDER BY f.created_date DESC, f.follow_id", (user_id,))


@tool(produces=("report_id", "post_id"), phrase="list the open reports for {reason}")
def list_open_reports(db: Db, reason: Reason) -> list:
    """List the open moderation reports with one reason, oldest first.

    Args:
        reason: The report reason.
    """
    return db.all("SELECT report_id, post_id, reporter_user_id, created_date FROM reports WHERE status = 'open' AND reason = ? "
                  "ORDER BY created_date, report_id", (reason,))


@tool(produces=("report_id", "post_id", "user_id"), phrase="look up {report_id}")
def get_report(db: Db, report_id: str) -> dict:
    """Get one moderation report.

    Args:
        report_id: The report id, e.g. "RP-9001".
    """
    return db.get("reports", report_id, "Report")


@tool(mode=WRITE, produces=("post_id", "user_id"), phrase='have {user_id} publish a {audience} post saying "{text}"', examples={"text": POST_EXAMPLES})
def create_post(db: Db, user_id: str, text: str, audience: Literal["public", "followers-only"] = "public") -> dict:
    """Publish a post for a user.

    Args:
        user_id: The author's user id.
        text: The post text, 1 to 280 characters.
        audience: Who may see it.
    """
    _active_user(db, user_id)
    text = _check_text(text, "post")
    audience = "followers" if audience == "followers-only" else audience
    post_id = db.next_id("posts", "PO-", 5001)
    db.insert("posts", {"post_id": post_id, "author_user_id": user_id, "text": text, "audience": audience, "like_count": 0,
                        "created_date": db.now[:10], "status": "visible"})
    return {"post_id": post_id, "author_user_id": user_id, "audience": audience, "length": len(text)}


@tool(mode=WRITE, produces=("follow_id", "user_id"), phrase="have {user_id} follow @{handle}")
def follow_user(db: Db, user_id: str, handle: str) -> dict:
    """Make a user follow another account (a request, when the account is private).

    Args:
        user_id: The follower's user id.
        handle: The handle of the account to follow.
    """
    _active_user(db, user_id)
    target = _by_handle(db, handle)
    if target["user_id"] == user_id:
        raise ToolError("Users cannot follow themselves.")
    if _blocked(db, user_id, target["user_id"]):
        raise ToolError(f"User {user_id} and @{target['handle']} have a block between them; they cannot follow each other.")
    existing = _follow_status(db, user_id, target["user_id"])
    if existing:
        raise ToolError(f"User {user_id} already has an {existing} follow of @{target['handle']}.")
    status = "pending" if target["privacy"] == "private" else "accepted"
    follow_id = db.next_id("follows", "FW-", 2001)
    db.insert("follows", {"follow_id": follow_id, "follower_user_id": user_id, "followee_user_id": target["user_id"],
                          "status": status, "created_date": db.now[:10]})
    return {"follow_id": follow_id, "followee_user_id": target["user_id"], "status": status}


@tool(mode=WRITE, produces=("comment_id", "post_id"), phrase='have {user_id} comment "{text}" on {post_id}',
      examples={"text": ["Congratulations!", "Totally agree with this.", "Where was this taken?", "Thanks for sharing."]})
def comment_on_post(db: Db, user_id: str, post_id: str, text: str) -> dict:
    """Add a user's comment to a post they are allowed to interact with.

    Args:
        user_id: The commenter's user id.
        post_id: The post id.
        text: The comment, 1 to 280 characters.
    """
    _active_user(db, user_id)
    post = db.get("posts", post_id, "Post")
    if post["status"] != "visible":
        raise ToolError(f"Post {post_id} is {post['status']}; it cannot be commented on.")
    author = post["author_user_id"]
    if author != user_id:
        if _blocked(db, user_id, author):
            raise ToolError(f"User {user_id} and the author of post {post_id} have a block between them.")
        restricted = post["audience"] == "followers" or _user(db, author)["privacy"] == "private"
        if restricted and _follow_status(db, user_id, author) != "accepted":
            raise ToolError(f"Post {post_id} is for followers only and user {user_id} is not an accepted follower of its author.")
    text = _check_text(text, "comment")
    comment_id = db.next_id("comments", "CM-", 7001)
    db.insert("comments", {"comment_id": comment_id, "post_id": post_id, "author_user_id": user_id, "text": text, "created_date": db.now[:10]})
    count = db.value("SELECT COUNT(*) FROM comments WHERE post_id = ?", (post_id,))
    return {"comment_id": comment_id, "post_id": post_id, "comment_count": count}


@tool(mode=WRITE, produces=("report_id", "post_id"), phrase="have {user_id} report {post_id} for {reason}")
def report_post(db: Db, user_id: str, post_id: str, reason: Reason) -> dict:
    """File a moderation report about a post.

    Args:
        user_id: The reporting user's id.
        post_id: The post id.
        reason: Why the post is reported.
    """
    _active_user(db, user_id)
    post = db.get("posts", post_id, "Post")
    if post["author_user_id"] == user_id:
        raise ToolError("Users cannot report their own posts.")
    if post["status"] == "removed":
        raise ToolError(f"Post {post_id} was already removed.")
    if db.value("SELECT COUNT(*) FROM reports WHERE post_id = ? AND reporter_user_id = ?", (post_id, user_id)):
        raise ToolError(f"User {user_id} has already reported post {post_id}.")
    report_id = db.next_id("reports", "RP-", 9001)
    db.insert("reports", {"report_id": report_id, "post_id": post_id, "reporter_user_id": user_id, "reason": reason,
                          "status": "open", "created_date": db.now[:10]})
    return {"report_id": report_id, "post_id": post_id, "status": "open"}


@tool(mode=WRITE, produces=("report_id", "post_id"), phrase="resolve {report_id} as {decision}")
def resolve_report(db: Db, report_id: str, decision: Literal["upheld", "dismissed"]) -> dict:
    """Resolve an open report; upholding it hides the reported post.

    Args:
        report_id: The report id.
        decision: The moderator's decision.
    """
    report = db.get("reports", report_id, "Report")
    if report["status"] != "open":
        raise ToolError(f"Report {report_id} is already {report['status']}; only open reports can be resolved.")
    db.update("reports", report_id, status=decision)
    post_status = db.value("SELECT status FROM posts WHERE post_id = ?", (report["post_id"],))
    if decision == "upheld" and post_status == "visible":
        db.update("posts", report["post_id"], status="hidden")
        post_status = "hidden"
    return {"report_id": report_id, "status": decision, "post_id": report["post_id"], "post_status": post_status}


@tool(mode=WRITE, produces=("block_id", "user_id"), phrase="have {user_id} block @{handle}")
def block_user(db: Db, user_id: str, handle: str) -> dict:
    """Block an account: it is removed from the user's followers and following in both directions.

    Args:
        user_id: The blocking user's id.
        handle: The handle of the account to block.
    """
    _active_user(db, user_id)
    target = _by_handle(db, handle)
    if target["user_id"] == user_id:
        raise ToolError("Users cannot block themselves.")
    if db.value("SELECT COUNT(*) FROM blocks WHERE blocker_user_id = ? AND blocked_user_id = ?", (user_id, target["user_id"])):
        raise ToolError(f"User {user_id} has already blocked @{target['handle']}.")
    block_id = db.next_id("blocks", "BK-", 3001)
    db.insert("blocks", {"block_id": block_id, "blocker_user_id": user_id, "blocked_user_id": target["user_id"], "created_date": db.now[:10]})
    removed = db.execute("DELETE FROM follows WHERE (follower_user_id = ? AND followee_user_id = ?) OR (follower_user_id = ? AND followee_user_id = ?)",
                         (user_id, target["user_id"], target["user_id"], user_id))
    return {"block_id": block_id, "blocked_user_id": target["user_id"], "follows_removed": removed}


THEME = Theme(SPEC, [get_user, find_user_by_handle, list_user_posts, get_post, list_comments, list_followers, list_open_reports,
                     get_report, create_post, follow_user, comment_on_post, report_post, resolve_report, block_user])
