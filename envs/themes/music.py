"""music: a music streaming service: artists, albums, tracks, listeners with their plans, and playlists."""

from __future__ import annotations

from typing import Literal

from agentworld_gym.theme import Theme
from agentworld_gym.tools import WRITE, Db, ToolError, tool
from agentworld_gym.world import Table, ThemeSpec, choice_col, date_col, faker_col, fk_col, id_col, int_col

GENRES = ["pop", "rock", "jazz", "hip-hop", "electronic", "classical", "folk"]
PAID_PLANS = ("premium", "family")
PLAYLIST_TRACK_LIMIT = {"free": 20, "premium": 200, "family": 200}
FREE_PLAYLIST_LIMIT = 3

SPEC = ThemeSpec(
    id="music",
    title="Cadence Music",
    category="Media & Entertainment",
    subcategory="Video & Audio Processing",
    label="music streaming",
    description="You help Cadence listeners find music, play tracks, manage their playlists and change their subscription plan.",
    tables=(
        Table("artists", (
            id_col("artist_id", "AR-", 101), faker_col("name", "name"), choice_col("genre", GENRES),
            faker_col("country", "country_code"), int_col("monthly_listeners", 1_000, 5_000_000),
        ), rows=30),
        Table("albums", (
            id_col("album_id", "AL-", 501), fk_col("artist_id", "artists"), faker_col("title", "catch_phrase"),
            int_col("release_year", 1975, 2025), faker_col("label", "company"),
        ), rows=60),
        Table("tracks", (
            id_col("track_id", "TK-"), fk_col("album_id", "albums"), faker_col("title", "catch_phrase"), int_col("duration_seconds", 120, 420),
            choice_col("content_rating", ["clean", "explicit"], [0.8, 0.2]), choice_col("tier", ["standard", "premium"], [0.85, 0.15]),
            int_col("play_count", 0, 2_000_000),
        ), rows=250),
        Table("listeners", (
            id_col("listener_id", "LS-", 2001), faker_col("name", "name"), faker_col("email", "email", unique=True),
            choice_col("plan", ["free", "premium", "family"], [0.55, 0.35, 0.1]), choice_col("status", ["active", "cancelled"], [0.9, 0.1]),
            faker_col("country", "country_code"),
        ), rows=50),
        Table("playlists", (
            id_col("playlist_id", "PL-", 4001), fk_col("listener_id", "listeners"),
            choice_col("name", ["Road trip", "Focus", "Workout", "Chill evening", "Party", "Sunday morning"]),
            choice_col("visibility", ["public", "private"], [0.6, 0.4]), date_col("created_date", "2023-01-01", "2025-05-31"),
        ), rows=50),
        Table("playlist_tracks", (
            id_col("entry_id", "PE-", 6001), fk_col("playlist_id", "playlists"), fk_col("track_id", "tracks"),
            date_col("added_date", "2024-01-01", "2025-05-31"),
        ), rows=250),
    ),
    rules=(
        "Premium-tier tracks can be played or added to playlists only by listeners on the premium or family plan.",
        f"A playlist holds at most {PLAYLIST_TRACK_LIMIT['free']} tracks when its owner is on the free plan and "
        f"{PLAYLIST_TRACK_LIMIT['premium']} otherwise; each track at most once.",
        f"Free listeners can own at most {FREE_PLAYLIST_LIMIT} playlists.",
        "Cancelled listeners cannot play tracks or change playlists until they choose a plan again.",
        f"Moving to the free plan is refused while the listener owns more than {FREE_PLAYLIST_LIMIT} playlists or a playlist with more than "
        f"{PLAYLIST_TRACK_LIMIT['free']} tracks.",
    ),
)


def _listener(db: Db, listener_id: str) -> dict:
    return db.get("listeners", listener_id, "Listener")


def _active_listener(db: Db, listener_id: str) -> dict:
    listener = _listener(db, listener_id)
    if listener["status"] != "active":
        raise ToolError(f"Listener {listener_id} has cancelled; choose a plan again first.")
    return listener


def _check_tier(listener: dict, track: dict) -> None:
    if track["tier"] == "premium" and listener["plan"] not in PAID_PLANS:
        raise ToolError(f"Track {track['track_id']} is premium-only and listener {listener['listener_id']} is on the {listener['plan']} plan.")


def _track_count(db: Db, playlist_id: str) -> int:
    return db.value("SELECT COUNT(*) FROM playlist_tracks WHERE playlist_id = ?", (playlist_id,))


@tool(produces=("artist_id",), phrase="look up {artist_id}")
def get_artist(db: Db, artist_id: str) -> dict:
    """Get an artist's name, genre, country, monthly listeners and number of albums.

    Args:
        artist_id: The artist id, e.g. "AR-101".
    """
    artist = db.get("artists", artist_id, "Artist")
    artist["album_count"] = db.value("SELECT COUNT(*) FROM albums WHERE artist_id = ?", (artist_id,))
    return artist


@tool(produces=("artist_id",), phrase="find the {genre} artists")
def find_artists(db: Db, genre: Literal["pop", "rock", "jazz", "hip-hop", "electronic", "classical", "folk"]) -> list:
    """List the artists of one genre, most listened first.

    Args:
        genre: The genre.
    """
    return db.all("SELECT * FROM artists WHERE genre = ? ORDER BY monthly_listeners DESC, artist_id", (genre,))


@tool(produces=("album_id", "artist_id"), phrase="list the albums of {artist_id}")
def list_albums(db: Db, artist_id: str) -> list:
    """List an artist's albums, newest first.

    Args:
        artist_id: The artist id.
    """
    db.get("artists", artist_id, "Artist")
    return db.all("SELECT * FROM albums WHERE artist_id = ? ORDER BY release_year DESC, album_id", (artist_id,))


@tool(produces=("album_id", "artist_id"), phrase="look up {album_id}")
def get_album(db: Db, album_id: str) -> dict:
    """Get an album with its number of tracks and total running time in minutes.

    Args:
        album_id: The album id, e.g. "AL-501".
    """
    album = db.get("albums", album_id, "Album")
    row = db.one("SELECT COUNT(*) AS n, COALESCE(SUM(duration_seconds), 0) AS s FROM tracks WHERE album_id = ?", (album_id,))
    album["track_count"] = row["n"]
    album["total_minutes"] = round(row["s"] / 60, 1)
    return album


@tool(produces=("track_id", "album_id"), phrase="list the tracks on {album_id}")
def list_album_tracks(db: Db, album_id: str) -> list:
    """List the tracks of an album.

    Args:
        album_id: The album id.
    """
    db.get("albums", album_id, "Album")
    return db.all("SELECT * FROM tracks WHERE album_id = ? ORDER BY track_id", (album_id,))


@tool(produces=("track_id", "album_id", "artist_id"), phrase="look up {track_id}")
def get_track(db: Db, track_id: str) -> dict:
    """Get a track with its album, artist, duration, content rating, tier and play count.

    Args:
        track_id: The track id, e.g. "TK-1001".
    """
    track = db.get("tracks", track_id, "Track")
    track["artist_id"] = db.value("SELECT artist_id FROM albums WHERE album_id = ?", (track["album_id"],))
    return track


@tool(produces=("listener_id",), phrase="look up {listener_id}")
def get_listener(db: Db, listener_id: str) -> dict:
    """Get a listener's plan, status, country and number of playlists.

    Args:
        listener_id: The listener id, e.g. "LS-2001".
    """
    listener = _listener(db, listener_id)
    listener["playlist_count"] = db.value("SELECT COUNT(*) FROM playlists WHERE listener_id = ?", (listener_id,))
    return listener


@tool(produces=("listener_id",), phrase="find the listener with the email {email}")
def find_listener_by_email(db: Db, email: str) -> dict:
    """Find a listener by email address.

    Args:
        email: The listener's email address.
    """
    row = db.one("SELECT * FROM listeners WHERE lower(email) = lower(?) ORDER BY listener_id LIMIT 1", (email.strip(),))
    if row is None:
        raise ToolError(f"No listener with email {email!r}.")
    return row


@tool(produces=("playlist_id", "listener_id"), phrase="open {playlist_id}")
def get_playlist(db: Db, playlist_id: str) -> dict:
    """Get a playlist with its owner, number of tracks and total running time in minutes.

    Args:
        playlist_id: The playlist id, e.g. "PL-4001".
    """
    playlist = db.get("playlists", playlist_id, "Playlist")
    row = db.one("SELECT COUNT(*) AS n, COALESCE(SUM(t.duration_seconds), 0) AS s FROM playlist_tracks p JOIN tracks t ON t.track_id = p.track_id "
                 "WHERE p.playlist_id = ?", (playlist_id,))
    playlist["track_count"] = row["n"]
    playlist["total_minutes"] = round(row["s"] / 60, 1)
    return playlist


@tool(produces=("track_id", "playlist_id"), phrase="list the tracks in {playlist_id}")
def list_playlist_tracks(db: Db, playlist_id: str) -> list:
    """List a playlist's tracks in the order they were added.

    Args:
        playlist_id: The playlist id.
    """
    db.get("playlists", playlist_id, "Playlist")
    return db.all("SELECT p.playlist_id, t.track_id, t.title, t.duration_seconds, t.tier, p.added_date FROM playlist_tracks p JOIN tracks t ON t.track_id = p.track_id "
                  "WHERE p.playlist_id = ? ORDER BY p.added_date, p.entry_id", (playlist_id,))


@tool(mode=WRITE, produces=("playlist_id", "listener_id"), phrase='create a {visibility} playlist called "{name}" for {listener_id}',
      examples={"name": ["Morning run", "Rainy day", "Study beats", "Dinner party", "Throwbacks"]})
def create_playlist(db: Db, listener_id: str, name: str, visibility: Literal["public", "private"] = "private") -> dict:
    """Create an empty playlist for a listener.

    Args:
        listener_id: The owner's listener id.
        name: The playlist name.
        visibility: Who can see it.
    """
    listener = _active_listener(db, listener_id)
    name = " ".join(name.split())
    if not name:
        raise ToolError("A playlist needs a name.")
    owned = db.value("SELECT COUNT(*) FROM playlists WHERE listener_id = ?", (listener_id,))
    if listener["plan"] == "free" and owned >= FREE_PLAYLIST_LIMIT:
        raise ToolError(f"Listener {listener_id} is on the free plan and already owns {owned} playlists (at most {FREE_PLAYLIST_LIMIT}).")
    playlist_id = db.next_id("playlists", "PL-", 4001)
    db.insert("playlists", {"playlist_id": playlist_id, "listener_id": listener_id, "name": name, "visibility": visibility, "created_date": db.now[:10]})
    return {"playlist_id": playlist_id, "listener_id": listener_id, "name": name, "visibility": visibility, "playlist_count": owned + 1}


@tool(mode=WRITE, produces=("playlist_id", "track_id"), phrase="add {track_id} to {playlist_id}")
def add_track_to_playlist(db: Db, playlist_id: str, track_id: str) -> dict:
    """Add a track to the end of a playlist, on behalf of its owner.

    Args:
        playlist_id: The playlist id.
        track_id: The track id.
    """
    playlist = db.get("playlists", playlist_id, "Playlist")
    owner = _active_listener(db, playlist["listener_id"])
    track = db.get("tracks", track_id, "Track")
    _check_tier(owner, track)
    if db.value("SELECT COUNT(*) FROM playlist_tracks WHERE playlist_id = ? AND track_id = ?", (playlist_id, track_id)):
        raise ToolError(f"Track {track_id} is already in playlist {playlist_id}.")
    count, limit = _track_count(db, playlist_id), PLAYLIST_TRACK_LIMIT[owner["plan"]]
    if count >= limit:
        raise ToolError(f"Playlist {playlist_id} is full: {count} tracks, the {owner['plan']} plan allows {limit}.")
    db.insert("playlist_tracks", {"entry_id": db.next_id("playlist_tracks", "PE-", 6001), "playlist_id": playlist_id, "track_id": track_id,
                                  "added_date": db.now[:10]})
    return {"playlist_id": playlist_id, "track_id": track_id, "track_count": count + 1}


@tool(mode=WRITE, produces=("playlist_id", "track_id"), phrase="remove {track_id} from {playlist_id}")
def remove_track_from_playlist(db: Db, playlist_id: str, track_id: str) -> dict:
    """Remove a track from a playlist, on behalf of its owner.

    Args:
        playlist_id: The playlist id.
        track_id: The track id.
    """
    playlist = db.get("playlists", playlist_id, "Playlist")
    _active_listener(db, playlist["listener_id"])
    removed = db.execute("DELETE FROM playlist_tracks WHERE playlist_id = ? AND track_id = ?", (playlist_id, track_id))
    if not removed:
        raise ToolError(f"Track {track_id} is not in playlist {playlist_id}.")
    return {"playlist_id": playlist_id, "track_id": track_id, "track_count": _track_count(db, playlist_id)}


@tool(mode=WRITE, produces=("listener_id",), phrase="move {listener_id} to the {plan} plan")
def change_plan(db: Db, listener_id: str, plan: Literal["free", "premium", "family"]) -> dict:
    """Change a listener's subscription plan (this also reactivates a cancelled listener).

    Args:
        listener_id: The listener id.
        plan: The new plan.
    """
    listener = _listener(db, listener_id)
    if listener["plan"] == plan and listener["status"] == "active":
        raise ToolError(f"Listener {listener_id} is already on the {plan} plan.")
    if plan == "free":
        owned = db.value("SELECT COUNT(*) FROM playlists WHERE listener_id = ?", (listener_id,))
        if owned > FREE_PLAYLIST_LIMIT:
            raise ToolError(f"Listener {listener_id} owns {owned} playlists; the free plan allows {FREE_PLAYLIST_LIMIT}. Delete some first.")
        big = db.value("SELECT p.playlist_id FROM playlists p JOIN playlist_tracks t ON t.playlist_id = p.playlist_id WHERE p.listener_id = ? "
                       "GROUP BY p.playlist_id HAVING COUNT(*) > ? ORDER BY p.playlist_id LIMIT 1", (listener_id, PLAYLIST_TRACK_LIMIT["free"]))
        if big:
            raise ToolError(f"Playlist {big} has more than {PLAYLIST_TRACK_LIMIT['free']} tracks; the free plan does not allow that.")
    db.update("listeners", listener_id, plan=plan, status="active")
    return {"listener_id": listener_id, "plan": plan, "previous_plan": listener["plan"], "status": "active"}


@tool(mode=WRITE, produces=("track_id", "listener_id"), phrase="play {track_id} for {listener_id}")
def play_track(db: Db, listener_id: str, track_id: str) -> dict:
    """Play a track for a listener (counts one play).

    Args:
        listener_id: The listener id.
        track_id: The track id.
    """
    listener = _active_listener(db, listener_id)
    track = db.get("tracks", track_id, "Track")
    _check_tier(listener, track)
    db.update("tracks", track_id, play_count=track["play_count"] + 1)
    return {"track_id": track_id, "listener_id": listener_id, "play_count": track["play_count"] + 1, "duration_seconds": track["duration_seconds"]}


THEME = Theme(SPEC, [get_artist, find_artists, list_albums, get_album, list_album_tracks, get_track, get_listener, find_listener_by_email,
                     get_playlist, list_playlist_tracks, create_playlist, add_track_to_playlist, remove_track_from_playlist, change_plan, play_track])
