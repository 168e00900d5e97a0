"""docs: a document collaboration service: users, folders, documents, versions, shares and comments."""

from __future__ import annotations

from typing import Literal

from agentworld_gym.theme import Theme
from agentworld_gym.tools import WRITE, Db, ToolError, tool
from agentworld_gym.world import Table, ThemeSpec, choice_col, date_col, faker_col, fk_col, id_col, int_col

RANK = {"viewer": 1, "commenter": 2, "editor": 3, "owner": 4}
Role = Literal["viewer", "commenter", "editor"]

SPEC = ThemeSpec(
    id="docs",
    title="Quire Docs",
    category="Document & Design",
    subcategory="Office & Text Processing",
    label="document collaboration",
    description="You act for Quire users on their documents: sharing, editing, commenting and archiving, within each user's permissions.",
    tables=(
        Table("users", (
            id_col("user_id", "US-", 101), faker_col("name", "name"), faker_col("email", "email", unique=True),
            choice_col("department", ["engineering", "marketing", "legal", "finance", "design"]),
        ), rows=30),
        Table("folders", (
            id_col("folder_id", "FO-", 201), fk_col("owner_user_id", "users"),
            choice_col("name", ["Projects", "Reports", "Meeting notes", "Proposals", "Archive", "Templates"]),
            date_col("created_date", "2022-01-01", "2025-01-31"),
        ), rows=20),
        Table("documents", (
            id_col("document_id", "DC-"), fk_col("folder_id", "folders"), fk_col("owner_user_id", "users"), faker_col("title", "catch_phrase"),
            int_col("word_count", 100, 8_000), choice_col("status", ["draft", "published", "archived"], [0.5, 0.35, 0.15]),
            date_col("updated_date", "2024-06-01", "2025-05-31"),
        ), rows=100),
        Table("versions", (
            id_col("version_id", "VE-", 3001), fk_col("document_id", "documents"), fk_col("editor_user_id", "users"),
            int_col("word_count", 100, 8_000), date_col("created_date", "2024-06-01", "2025-05-31"),
        ), rows=150),
        Table("shares", (
            id_col("share_id", "SH-", 5001), fk_col("document_id", "documents"), fk_col("user_id", "users"),
            choice_col("role", ["viewer", "commenter", "editor"], [0.45, 0.25, 0.3]), date_col("granted_date", "2024-01-01", "2025-05-31"),
        ), rows=150),
        Table("comments", (
            id_col("comment_id", "CO-", 7001), fk_col("document_id", "documents"), fk_col("author_user_id", "users"),
            faker_col("text", ("sentence", 9)), choice_col("status", ["open", "resolved"], [0.6, 0.4]),
            date_col("created_date", "2025-01-01", "2025-05-31"),
        ), rows=120),
    ),
    rules=(
        "Access levels, highest first: owner, editor, commenter, viewer. A user without a share has no access to someone else's document.",
        "Only a document's owner can share it, change or revoke its shares, or archive it; owners cannot share with themselves.",
        "The owner and editors can edit (every edit saves a new version); commenters, editors and the owner can comment; viewers can only read.",
        "Archived documents are read-only: no edits, comments or new shares.",
        "A comment can be resolved only by its author or the document's owner, and only once.",
    ),
)


def _document(db: Db, document_id: str) -> dict:
    return db.get("documents", document_id, "Document")


def _role(db: Db, user_id: str, doc: dict) -> str | None:
    if doc["owner_user_id"] == user_id:
        return "owner"
    roles = [r["role"] for r in db.all("SELECT role FROM shares WHERE document_id = ? AND user_id = ? ORDER BY share_id", (doc["document_id"], user_id))]
    return max(roles, key=RANK.get) if roles else None


def _require(db: Db, user_id: str, doc: dict, needed: str, action: str) -> str:
    db.get("users", user_id, "User")
    role = _role(db, user_id, doc)
    if role is None or RANK[role] < RANK[needed]:
        who = f"is only a {role}" if role else "has no access"
        raise ToolError(f"User {user_id} {who} on document {doc['document_id']}; to {action} you must be {'the owner' if needed == 'owner' else 'at least ' + needed}.")
    return role


def _not_archived(doc: dict) -> None:
    if doc["status"] == "archived":
        raise ToolError(f"Document {doc['document_id']} is archived and read-only.")


@tool(produces=("user_id",), phrase="look up {user_id}")
def get_user(db: Db, user_id: str) -> dict:
    """Get a user's name, email, department and number of documents they own.

    Args:
        user_id: The user id, e.g. "US-101".
    """
    user = db.get("users", user_id, "User")
    user["documents_owned"] = db.value("SELECT COUNT(*) FROM documents WHERE owner_user_id = ?", (user_id,))
    return user


@tool(produces=("user_id",), phrase="find the user with the email {email}")
def find_user_by_email(db: Db, email: str) -> dict:
    """Find a user by email address.

    Args:
        email: The email address.
    """
    row = db.one("SELECT * FROM users WHERE lower(email) = lower(?) ORDER BY user_id LIMIT 1", (email.strip(),))
    if row is None:
        raise ToolError(f"No user with email {email!r}.")
    return row


@tool(produces=("document_id", "folder_id", "user_id"), phrase="open {document_id}")
def get_document(db: Db, document_id: str) -> dict:
    """Get a document's title, folder, owner, word count, status and counts of versions, shares and open comments.

    Args:
        document_id: The document id, e.g. "DC-1001".
    """
    doc = _document(db, document_id)
    doc["version_count"] = db.value("SELECT COUNT(*) FROM versions WHERE document_id = ?", (document_id,))
    doc["share_count"] = db.value("SELECT COUNT(*) FROM shares WHERE document_id = ?", (document_id,))
    doc["open_comments"] = db.value("SELECT COUNT(*) FROM comments WHERE document_id = ? AND status = 'open'", (document_id,))
    return doc


@tool(produces=("document_id", "folder_id"), phrase="list the documents in {folder_id}")
def list_folder_documents(db: Db, folder_id: str) -> list:
    """List the documents of a folder, most recently updated first.

    Args:
        folder_id: The folder id, e.g. "FO-201".
    """
    db.get("folders", folder_id, "Folder")
    return db.all("SELECT document_id, folder_id, title, owner_user_id, status, updated_date FROM documents WHERE folder_id = ? "
                  "ORDER BY updated_date DESC, document_id", (folder_id,))


@tool(produces=("document_id", "share_id"), phrase="list the documents shared with {user_id}")
def list_shared_with(db: Db, user_id: str) -> list:
    """List the documents shared with a user, with the role they hold on each.

    Args:
        user_id: The user id.
    """
    db.get("users", user_id, "User")
    return db.all("SELECT s.share_id, s.document_id, d.title, s.role FROM shares s JOIN documents d ON d.document_id = s.document_id "
                  "WHERE s.user_id = ? ORDER BY s.document_id, s.share_id", (user_id,))


@tool(produces=("document_id", "user_id"), phrase="check what access {user_id} has to {document_id}")
def get_access(db: Db, user_id: str, document_id: str) -> dict:
    """Tell which access level (owner, editor, commenter, viewer or none) a user has on a document.

    Args:
        user_id: The user id.
        document_id: The document id.
    """
    db.get("users", user_id, "User")
    doc = _document(db, document_id)
    role = _role(db, user_id, doc) or "none"
    return {"user_id": user_id, "document_id": document_id, "access": role,
            "edit_permission": "granted" if role in ("owner", "editor") and doc["status"] != "archived" else "denied"}


@tool(produces=("version_id", "user_id"), phrase="list the version history of {document_id}")
def list_versions(db: Db, document_id: str) -> list:
    """List a document's saved versions, newest first.

    Args:
        document_id: The document id.
    """
    _document(db, document_id)
    return db.all("SELECT * FROM versions WHERE document_id = ? ORDER BY created_date DESC, version_id DESC", (document_id,))


@tool(produces=("share_id", "user_id"), phrase="list who {document_id} is shared with")
def list_shares(db: Db, document_id: str) -> list:
    """List the shares of a document.

    Args:
        document_id: The document id.
    """
    _document(db, document_id)
    return db.all("SELECT s.share_id, s.user_id, u.email, s.role, s.granted_date FROM shares s JOIN users u ON u.user_id = s.user_id "
                  "WHERE s.document_id = ? ORDER BY s.share_id", (document_id,))


@tool(produces=("comment_id", "user_id"), phrase="list the {status} comments on {document_id}")
def list_comments(db: Db, document_id: str, status: Literal["open", "resolved"] | None = None) -> list:
    """List a document's comments, oldest first, optionally only open or resolved ones.

    Args:
        document_id: The document id.
        status: Only comments with this status.
    """
    _document(db, document_id)
    sql, params = "SELECT * FROM comments WHERE document_id = ?", [document_id]
    if status:
        sql, params = sql + " AND status = ?", params + [status]
    return db.all(sql + " ORDER BY created_date, comment_id", params)


@tool(mode=WRITE, produces=("share_id", "document_id"), phrase="acting as {user_id}, share {document_id} with {email} as {role}")
def share_document(db: Db, user_id: str, document_id: str, email: str, role: Role) -> dict:
    """Share a document with someone (or change the role they already have). Only the owner may do this.

    Args:
        user_id: The acting user (must own the document).
        document_id: The document id.
        email: The email of the person to share with.
        role: The access level to give.
    """
    doc = _document(db, document_id)
    _require(db, user_id, doc, "owner", "share it")
    _not_archived(doc)
    target = db.one("SELECT * FROM users WHERE lower(email) = lower(?) ORDER BY user_id LIMIT 1", (email.strip(),))
    if target is None:
        raise ToolError(f"No user with email {email!r}.")
    if target["user_id"] == user_id:
        raise ToolError("Owners cannot share a document with themselves.")
    existing = db.one("SELECT * FROM shares WHERE document_id = ? AND user_id = ? ORDER BY share_id LIMIT 1", (document_id, target["user_id"]))
    if existing and existing["role"] == role:
        raise ToolError(f"{email} is already a {role} on document {document_id}.")
    if existing:
        db.update("shares", existing["share_id"], role=role, granted_date=db.now[:10])
        share_id = existing["share_id"]
    else:
        share_id = db.next_id("shares", "SH-", 5001)
        db.insert("shares", {"share_id": share_id, "document_id": document_id, "user_id": target["user_id"], "role": role, "granted_date": db.now[:10]})
    return {"share_id": share_id, "document_id": document_id, "shared_with_user_id": target["user_id"], "role": role,
            "previous_role": existing["role"] if existing else "none"}


@tool(mode=WRITE, produces=("share_id", "document_id"), phrase="acting as {user_id}, revoke {share_id}")
def revoke_share(db: Db, user_id: str, share_id: str) -> dict:
    """Remove a share from a document. Only the document's owner may do this.

    Args:
        user_id: The acting user (must own the document).
        share_id: The share id, e.g. "SH-5001".
    """
    share = db.get("shares", share_id, "Share")
    doc = _document(db, share["document_id"])
    _require(db, user_id, doc, "owner", "revoke a share")
    db.execute("DELETE FROM shares WHERE share_id = ?", (share_id,))
    left = db.value("SELECT COUNT(*) FROM shares WHERE document_id = ?", (doc["document_id"],))
    return {"share_id": share_id, "document_id": doc["document_id"], "revoked_role": share["role"], "share_count": left}


@tool(mode=WRITE, produces=("version_id", "document_id"), phrase="acting as {user_id}, edit {document_id} so that it has {word_count} words",
      examples={"word_count": [450, 1200, 2500, 3800, 6000]})
def edit_document(db: Db, user_id: str, document_id: str, word_count: int) -> dict:
    """Save an edit of a document as a new version with its new word count.

    Args:
        user_id: The acting user (owner or editor).
        document_id: The document id.
        word_count: The document's word count after the edit.
    """
    doc = _document(db, document_id)
    _require(db, user_id, doc, "editor", "edit it")
    _not_archived(doc)
    if word_count < 0:
        raise ToolError(f"The word count cannot be negative, got {word_count}.")
    version_id = db.next_id("versions", "VE-", 3001)
    db.insert("versions", {"version_id": version_id, "document_id": document_id, "editor_user_id": user_id, "word_count": word_count,
                           "created_date": db.now[:10]})
    db.update("documents", document_id, word_count=word_count, updated_date=db.now[:10])
    versions = db.value("SELECT COUNT(*) FROM versions WHERE document_id = ?", (document_id,))
    return {"version_id": version_id, "document_id": document_id, "word_change": word_count - doc["word_count"], "version_count": versions}


@tool(mode=WRITE, produces=("comment_id", "document_id"), phrase='acting as {user_id}, comment "{text}" on {document_id}',
      examples={"text": ["Can we shorten this section?", "Please add a source here.", "Looks good to me.", "Typo in the second paragraph."]})
def add_comment(db: Db, user_id: str, document_id: str, text: str) -> dict:
    """Add a comment to a document.

    Args:
        user_id: The acting user (commenter, editor or owner).
        document_id: The document id.
        text: The comment text.
    """
    doc = _document(db, document_id)
    _require(db, user_id, doc, "commenter", "comment")
    _not_archived(doc)
    if not text.strip():
        raise ToolError("A comment cannot be empty.")
    comment_id = db.next_id("comments", "CO-", 7001)
    db.insert("comments", {"comment_id": comment_id, "document_id": document_id, "author_user_id": user_id, "text": text.strip(),
                           "status": "open", "created_date": db.now[:10]})
    open_count = db.value("SELECT COUNT(*) FROM comments WHERE document_id = ? AND status = 'open'", (document_id,))
    return {"comment_id": comment_id, "document_id": document_id, "open_comments": open_count}


@tool(mode=WRITE, produces=("comment_id", "document_id"), phrase="acting as {user_id}, resolve {comment_id}")
def resolve_comment(db: Db, user_id: str, comment_id: str) -> dict:
    """Resolve an open comment. Only its author or the document's owner may do this.

    Args:
        user_id: The acting user.
        comment_id: The comment id, e.g. "CO-7001".
    """
    comment = db.get("comments", comment_id, "Comment")
    doc = _document(db, comment["document_id"])
    db.get("users", user_id, "User")
    if user_id not in (comment["author_user_id"], doc["owner_user_id"]):
        raise ToolError(f"Only the author of comment {comment_id} or the owner of document {doc['document_id']} can resolve it.")
    if comment["status"] == "resolved":
        raise ToolError(f"Comment {comment_id} is already resolved.")
    db.update("comments", comment_id, status="resolved")
    return {"comment_id": comment_id, "document_id": doc["document_id"], "status": "resolved"}


@tool(mode=WRITE, produces=("document_id",), phrase="acting as {user_id}, archive {document_id}")
def archive_document(db: Db, user_id: str, document_id: str) -> dict:
    """Archive a document (it becomes read-only). Only the owner may do this.

    Args:
        user_id: The acting user (must own the document).
        document_id: The document id.
    """
    doc = _document(db, document_id)
    _require(db, user_id, doc, "owner", "archive it")
    if doc["status"] == "archived":
        raise ToolError(f"Document {document_id} is already archived.")
    db.update("documents", document_id, status="archived", updated_date=db.now[:10])
    return {"document_id": document_id, "status": "archived", "previous_status": doc["status"]}


THEME = Theme(SPEC, [get_user, find_user_by_email, get_document, list_folder_documents, list_shared_with, get_access, list_versions,
                     list_shares, list_comments, share_document, revoke_share, edit_document, add_comment, resolve_comment, archive_document])
