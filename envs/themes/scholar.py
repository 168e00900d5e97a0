"""scholar: a literature search service: authors, papers, venues, the citation graph and reading lists."""

from __future__ import annotations

from typing import Literal

from agentworld_gym.theme import Theme
from agentworld_gym.tools import WRITE, Db, ToolError, tool
from agentworld_gym.world import Table, ThemeSpec, choice_col, date_col, faker_col, fk_col, id_col, int_col, money_col

FIELDS = ["machine learning", "genomics", "climate science", "economics", "neuroscience", "materials science"]
Field = Literal["machine learning", "genomics", "climate science", "economics", "neuroscience", "materials science"]
INSTITUTIONS = ["Northgate University", "Lakeshore Institute of Technology", "Meridian College", "Halden University",
                "Eastbrook Research Centre", "Saint Ives University", "Pacific Polytechnic", "Ridgeway University"]
READING_LIST_LIMIT = 10

SPEC = ThemeSpec(
    id="scholar",
    title="Scholia",
    category="Academic & Scientific Research",
    subcategory="Literature Search & Discovery",
    label="literature search",
    description="You help researchers find papers, follow citations and keep their reading lists in order.",
    tables=(
        Table("authors", (
            id_col("author_id", "AU-"), faker_col("name", "name"), faker_col("email", "email", unique=True),
            choice_col("affiliation", INSTITUTIONS), choice_col("field", FIELDS), int_col("h_index", 1, 70),
        ), rows=50),
        Table("venues", (
            id_col("venue_id", "VN-", 101), faker_col("acronym", ("lexify", "????", "ABCDEFGHIJKLMNOPQRSTUVWXYZ"), unique=True),
            choice_col("kind", ["journal", "conference", "workshop"], [0.5, 0.4, 0.1]), choice_col("field", FIELDS),
            money_col("impact_factor", 0.5, 15), choice_col("access", ["open", "subscription"]),
        ), rows=12),
        Table("papers", (
            id_col("paper_id", "PA-", 3001), faker_col("title", "catch_phrase"), fk_col("author_id", "authors"),
            fk_col("venue_id", "venues"), int_col("year", 2012, 2025), choice_col("field", FIELDS),
            faker_col("doi", ("bothify", "10.####/#####"), unique=True),
            choice_col("status", ["published", "preprint", "retracted"], [0.75, 0.22, 0.03]),
        ), rows=180),
        Table("citations", (
            id_col("citation_id", "CI-", 6001), fk_col("citing_paper_id", "papers"), fk_col("cited_paper_id", "papers"),
            choice_col("context", ["background", "method", "comparison", "extension"]),
        ), rows=300),
        Table("reading_lists", (
            id_col("reading_list_id", "RL-", 801), fk_col("author_id", "authors"),
            choice_col("name", ["to read", "thesis background", "related work", "journal club", "review queue"]),
            choice_col("visibility", ["private", "public"], [0.6, 0.4]),
        ), rows=25),
        Table("reading_list_items", (
            id_col("item_id", "RI-", 9001), fk_col("reading_list_id", "reading_lists"), fk_col("paper_id", "papers"),
            date_col("added_date", "2024-01-01", "2025-05-31"), choice_col("status", ["unread", "reading", "read"], [0.5, 0.2, 0.3]),
        ), rows=110),
    ),
    rules=(
        "Retracted papers never appear in search results, cannot be added to reading lists and cannot be cited.",
        f"A reading list holds at most {READING_LIST_LIMIT} papers, each at most once.",
        "A paper can only cite another paper (never itself) from the same year or earlier, and each pair only once.",
        "An author cannot have two reading lists with the same name.",
    ),
)


def _paper(db: Db, paper_id: str) -> dict:
    return db.get("papers", paper_id, "Paper")


def _item(db: Db, reading_list_id: str, paper_id: str) -> dict | None:
    return db.one("SELECT * FROM reading_list_items WHERE reading_list_id = ? AND paper_id = ? ORDER BY item_id LIMIT 1", (reading_list_id, paper_id))


@tool(produces=("paper_id", "author_id", "venue_id"), phrase="look up {paper_id}")
def get_paper(db: Db, paper_id: str) -> dict:
    """Get a paper's title, lead author, venue, year, field, DOI, status and citation counts.

    Args:
        paper_id: The paper id, e.g. "PA-3001".
    """
    paper = _paper(db, paper_id)
    paper["times_cited"] = db.value("SELECT COUNT(*) FROM citations WHERE cited_paper_id = ?", (paper_id,))
    paper["reference_count"] = db.value("SELECT COUNT(*) FROM citations WHERE citing_paper_id = ?", (paper_id,))
    return paper


@tool(produces=("paper_id", "author_id"), phrase="find the {field} papers published since {since_year}",
      examples={"since_year": [2015, 2018, 2020, 2022, 2024]})
def search_papers(db: Db, field: Field, since_year: int) -> list:
    """Search papers of one field published in or after a year, newest first (retracted papers are left out).

    Args:
        field: The research field.
        since_year: The earliest publication year to include.
    """
    return db.all("SELECT paper_id, title, author_id, year, status FROM papers WHERE field = ? AND year >= ? AND status != 'retracted' "
                  "ORDER BY year DESC, paper_id", (field, since_year))


@tool(produces=("author_id",), phrase="look up {author_id}")
def get_author(db: Db, author_id: str) -> dict:
    """Get an author's profile with their number of papers and how often those papers were cited.

    Args:
        author_id: The author id, e.g. "AU-1001".
    """
    author = db.get("authors", author_id, "Author")
    author["paper_count"] = db.value("SELECT COUNT(*) FROM papers WHERE author_id = ?", (author_id,))
    author["total_citations"] = db.value("SELECT COUNT(*) FROM citations c JOIN papers p ON p.paper_id = c.cited_paper_id WHERE p.author_id = ?", (author_id,))
    return author


@tool(produces=("author_id",), phrase="find the authors named {name}")
def find_author(db: Db, name: str) -> list:
    """Find authors by (part of) their name.

    Args:
        name: The name or part of it, e.g. "Maria Lopez".
    """
    if len(name.strip()) < 3:
        raise ToolError("Give at least 3 characters of the name.")
    rows = db.all("SELECT author_id, name, affiliation, field FROM authors WHERE lower(name) LIKE ? ORDER BY author_id", (f"%{name.strip().lower()}%",))
    if not rows:
        raise ToolError(f"No author whose name contains {name!r}.")
    return rows


@tool(produces=("paper_id",), phrase="list the papers of {author_id}")
def list_author_papers(db: Db, author_id: str) -> list:
    """List the papers an author led, newest first.

    Args:
        author_id: The author id.
    """
    db.get("authors", author_id, "Author")
    return db.all("SELECT paper_id, title, year, venue_id, status FROM papers WHERE author_id = ? ORDER BY year DESC, paper_id", (author_id,))


@tool(produces=("paper_id",), phrase="find the papers that cite {paper_id}")
def list_citing_papers(db: Db, paper_id: str) -> list:
    """List the papers that cite a paper, newest first.

    Args:
        paper_id: The cited paper's id.
    """
    _paper(db, paper_id)
    return db.all("SELECT p.paper_id, p.title, p.year, c.context FROM citations c JOIN papers p ON p.paper_id = c.citing_paper_id "
                  "WHERE c.cited_paper_id = ? ORDER BY p.year DESC, p.paper_id, c.citation_id", (paper_id,))


@tool(produces=("paper_id",), phrase="list the references of {paper_id}")
def list_references(db: Db, paper_id: str) -> list:
    """List the papers a paper cites, newest first.

    Args:
        paper_id: The citing paper's id.
    """
    _paper(db, paper_id)
    return db.all("SELECT p.paper_id, p.title, p.year, c.context FROM citations c JOIN papers p ON p.paper_id = c.cited_paper_id "
                  "WHERE c.citing_paper_id = ? ORDER BY p.year DESC, p.paper_id, c.citation_id", (paper_id,))


@tool(produces=("venue_id",), phrase="look up {venue_id}")
def get_venue(db: Db, venue_id: str) -> dict:
    """Get a venue's acronym, kind, field, impact factor, access model and number of papers.

    Args:
        venue_id: The venue id, e.g. "VN-101".
    """
    venue = db.get("venues", venue_id, "Venue")
    venue["paper_count"] = db.value("SELECT COUNT(*) FROM papers WHERE venue_id = ?", (venue_id,))
    return venue


@tool(produces=("reading_list_id", "author_id"), phrase="open {reading_list_id}")
def get_reading_list(db: Db, reading_list_id: str) -> dict:
    """Get a reading list with its papers (oldest first) and how many are still unread.

    Args:
        reading_list_id: The reading list id, e.g. "RL-801".
    """
    rl = db.get("reading_lists", reading_list_id, "Reading list")
    rl["papers"] = db.all("SELECT paper_id, status, added_date FROM reading_list_items WHERE reading_list_id = ? ORDER BY added_date, item_id", (reading_list_id,))
    rl["paper_count"] = len(rl["papers"])
    rl["unread_count"] = sum(1 for p in rl["papers"] if p["status"] == "unread")
    return rl


@tool(mode=WRITE, produces=("reading_list_id", "paper_id"), phrase="add {paper_id} to {reading_list_id}")
def add_to_reading_list(db: Db, reading_list_id: str, paper_id: str) -> dict:
    """Add a paper to a reading list (as unread).

    Args:
        reading_list_id: The reading list id.
        paper_id: The paper id.
    """
    db.get("reading_lists", reading_list_id, "Reading list")
    paper = _paper(db, paper_id)
    if paper["status"] == "retracted":
        raise ToolError(f"Paper {paper_id} was retracted; it cannot be added to a reading list.")
    if _item(db, reading_list_id, paper_id):
        raise ToolError(f"Paper {paper_id} is already on reading list {reading_list_id}.")
    count = db.value("SELECT COUNT(*) FROM reading_list_items WHERE reading_list_id = ?", (reading_list_id,))
    if count >= READING_LIST_LIMIT:
        raise ToolError(f"Reading list {reading_list_id} is full ({count} of {READING_LIST_LIMIT} papers).")
    item_id = db.next_id("reading_list_items", "RI-", 9001)
    db.insert("reading_list_items", {"item_id": item_id, "reading_list_id": reading_list_id, "paper_id": paper_id,
                                     "added_date": db.now[:10], "status": "unread"})
    return {"reading_list_id": reading_list_id, "paper_id": paper_id, "paper_count": count + 1}


@tool(mode=WRITE, produces=("reading_list_id", "paper_id"), phrase="take {paper_id} off {reading_list_id}")
def remove_from_reading_list(db: Db, reading_list_id: str, paper_id: str) -> dict:
    """Remove a paper from a reading list.

    Args:
        reading_list_id: The reading list id.
        paper_id: The paper id.
    """
    db.get("reading_lists", reading_list_id, "Reading list")
    item = _item(db, reading_list_id, paper_id)
    if item is None:
        raise ToolError(f"Paper {paper_id} is not on reading list {reading_list_id}.")
    db.execute("DELETE FROM reading_list_items WHERE item_id = ?", (item["item_id"],))
    left = db.value("SELECT COUNT(*) FROM reading_list_items WHERE reading_list_id = ?", (reading_list_id,))
    return {"reading_list_id": reading_list_id, "paper_id": paper_id, "paper_count": left}


@tool(mode=WRITE, produces=("reading_list_id", "paper_id"), phrase="mark {paper_id} as read on {reading_list_id}")
def mark_paper_read(db: Db, reading_list_id: str, paper_id: str) -> dict:
    """Mark a paper on a reading list as read.

    Args:
        reading_list_id: The reading list id.
        paper_id: The paper id.
    """
    db.get("reading_lists", reading_list_id, "Reading list")
    item = _item(db, reading_list_id, paper_id)
    if item is None:
        raise ToolError(f"Paper {paper_id} is not on reading list {reading_list_id}.")
    if item["status"] == "read":
        raise ToolError(f"Paper {paper_id} is already marked as read on reading list {reading_list_id}.")
    db.update("reading_list_items", item["item_id"], status="read")
    unread = db.value("SELECT COUNT(*) FROM reading_list_items WHERE reading_list_id = ? AND status = 'unread'", (reading_list_id,))
    return {"reading_list_id": reading_list_id, "paper_id": paper_id, "status": "read", "unread_count": unread}


@tool(mode=WRITE, produces=("paper_id", "citation_id"), phrase="record that {paper_id} cites the paper with DOI {doi} as {context}")
def add_citation(db: Db, paper_id: str, doi: str, context: Literal["background", "method", "comparison", "extension"]) -> dict:
    """Record that a paper cites another paper, identified by its DOI.

    Args:
        paper_id: The citing paper's id.
        doi: The DOI of the cited paper, e.g. "10.1234/56789".
        context: Why it is cited.
    """
    citing = _paper(db, paper_id)
    cited = db.one("SELECT * FROM papers WHERE doi = ? ORDER BY paper_id LIMIT 1", (doi.strip(),))
    if cited is None:
        raise ToolError(f"No paper with DOI {doi!r}.")
    if cited["paper_id"] == paper_id:
        raise ToolError(f"Paper {paper_id} cannot cite itself.")
    for p in (citing, cited):
        if p["status"] == "retracted":
            raise ToolError(f"Paper {p['paper_id']} was retracted; it cannot take part in new citations.")
    if cited["year"] > citing["year"]:
        raise ToolError(f"Paper {paper_id} ({citing['year']}) cannot cite {cited['paper_id']}, which appeared later ({cited['year']}).")
    if db.value("SELECT COUNT(*) FROM citations WHERE citing_paper_id = ? AND cited_paper_id = ?", (paper_id, cited["paper_id"])):
        raise ToolError(f"Paper {paper_id} already cites {cited['paper_id']}.")
    citation_id = db.next_id("citations", "CI-", 6001)
    db.insert("citations", {"citation_id": citation_id, "citing_paper_id": paper_id, "cited_paper_id": cited["paper_id"], "context": context})
    times = db.value("SELECT COUNT(*) FROM citations WHERE cited_paper_id = ?", (cited["paper_id"],))
    return {"citation_id": citation_id, "citing_paper_id": paper_id, "cited_paper_id": cited["paper_id"], "cited_paper_times_cited": times}


@tool(mode=WRITE, produces=("reading_list_id", "author_id"), phrase='create a {visibility} reading list called "{name}" for {author_id}',
      examples={"name": ["weekend reading", "survey sources", "lab meeting", "grant proposal", "methods to try"]})
def create_reading_list(db: Db, author_id: str, name: str, visibility: Literal["private", "public"] = "private") -> dict:
    """Create an empty reading list for an author.

    Args:
        author_id: The owner's author id.
        name: The list's name.
        visibility: Who can see it.
    """
    db.get("authors", author_id, "Author")
    name = " ".join(name.split())
    if not name:
        raise ToolError("The reading list needs a name.")
    if db.value("SELECT COUNT(*) FROM reading_lists WHERE author_id = ? AND lower(name) = lower(?)", (author_id, name)):
        raise ToolError(f"Author {author_id} already has a reading list called {name!r}.")
    reading_list_id = db.next_id("reading_lists", "RL-", 801)
    db.insert("reading_lists", {"reading_list_id": reading_list_id, "author_id": author_id, "name": name, "visibility": visibility})
    return {"reading_list_id": reading_list_id, "author_id": author_id, "name": name, "visibility": visibility}


THEME = Theme(SPEC, [get_paper, search_papers, get_author, find_author, list_author_papers, list_citing_papers, list_references,
                     get_venue, get_reading_list, add_to_reading_list, remove_from_reading_list, mark_paper_read, add_citation,
                     create_reading_list])
