"""Writes a small Agent-World release in the real layout (the release itself is not committed).

    <root>/environment_mix/<id>/                    the environment's JSON collections
    <root>/environment_mix/<id>_step4_checkpoint.json   tools (name, description, parameters, implementation)
    <root>/environment_mix/questions/<id>.json       tasks: text, reference answer, rubric with the verified chain

`crm_logger` follows the shared template of the Smithery-derived environments: every call appends
{log_id: uuid4, timestamp: now, tool, params} to tool_call_logs.json, and new records get random ids
and creation times. `hostile` holds tools that attack the sandbox (and the host reading their replies and files).
`write_published_release` writes three environments with 7-digit ids and their questions exactly in the
shape the release publishes. Run as a script to write one: `python tests/release_fixture.py /tmp/release
[--hostile | --published]`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

LOG = '''
import json, os, uuid
from datetime import datetime

def _load(name):
    with open(os.path.join(os.environ["MCP_DB_DIR"], name)) as f:
        return json.load(f)

def _save(name, data):
    with open(os.path.join(os.environ["MCP_DB_DIR"], name), "w") as f:
        json.dump(data, f, indent=2)

def _log(tool, params):
    logs = _load("tool_call_logs.json")
    logs["logs"].append({"log_id": str(uuid.uuid4()), "timestamp": datetime.now().isoformat(), "tool": tool, "params": params})
    _save("tool_call_logs.json", logs)
'''

CRM_TOOLS = {
    "get_contact": ("Look up a contact by id.", {"contact_id": {"type": "string"}}, ["contact_id"], '''
def get_contact(contact_id, **_extra):
    _log("get_contact", {"contact_id": contact_id})
    contacts = _load("contacts.json")
    if contact_id not in contacts:
        return {"error": {"code": "not_found", "message": f"Contact {contact_id} not found."}}
    return contacts[contact_id]
'''),
    "search_contacts": ("Contacts in a city.", {"city": {"type": "string"}}, ["city"], '''
def search_contacts(city, **_extra):
    _log("search_contacts", {"city": city})
    return {"contacts": [c["contact_id"] for c in _load("contacts.json").values() if c["city"].lower() == city.lower()]}
'''),
    "add_note": ("Add a note to a contact.", {"contact_id": {"type": "string"}, "text": {"type": "string"}}, ["contact_id", "text"], '''
def add_note(contact_id, text, **_extra):
    _log("add_note", {"contact_id": contact_id, "text": text})
    if contact_id not in _load("contacts.json"):
        return {"error": {"code": "not_found", "message": f"Contact {contact_id} not found."}}
    notes = _load("notes.json")
    note = {"note_id": str(uuid.uuid4()), "contact_id": contact_id, "text": text, "created_at": datetime.now().isoformat()}
    notes.append(note)
    _save("notes.json", notes)
    return note
'''),
    "count_notes": ("How many notes a contact has.", {"contact_id": {"type": "string"}}, ["contact_id"], '''
def count_notes(contact_id, **_extra):
    _log("count_notes", {"contact_id": contact_id})
    return {"contact_id": contact_id, "notes": sum(n["contact_id"] == contact_id for n in _load("notes.json"))}
'''),
    "update_email": ("Change a contact's email.", {"contact_id": {"type": "string"}, "email": {"type": "string"}}, ["contact_id", "email"], '''
def update_email(contact_id, email, **_extra):
    _log("update_email", {"contact_id": contact_id, "email": email})
    contacts = _load("contacts.json")
    if contact_id not in contacts:
        return {"error": {"code": "not_found", "message": f"Contact {contact_id} not found."}}
    contacts[contact_id]["email"] = email
    contacts[contact_id]["updated_at"] = datetime.utcnow().isoformat()
    _save("contacts.json", contacts)
    return {"contact_id": contact_id, "email": email, "updated_at": contacts[contact_id]["updated_at"], "token": __import__("secrets").token_hex(8)}
'''),
}

CONTACTS = {
    "C-1": {"contact_id": "C-1", "name": "Grace Hopper", "email": "grace@navy.example", "city": "Arlington"},
    "C-2": {"contact_id": "C-2", "name": "Ada Byron", "email": "ada@analytical.example", "city": "London"},
    "C-3": {"contact_id": "C-3", "name": "Alan Turing", "email": "alan@bletchley.example", "city": "London"},
}

# The authors' run produced these reference answers: their uuids and times are not what a replay gives.
QUESTIONS = [
    {"id": "q1", "task": "What is Ada Byron's email address? Her contact id is C-2.", "reference_answer": "Ada Byron's email is ada@analytical.example.",
     "rubric": {"tool_chain": [{"tool_name": "get_contact", "parameters": {"contact_id": "C-2"}}], "criteria": ["states the email"]}},
    {"id": "q2", "task": "Log a note 'call back Monday' on Grace Hopper (C-1).",
     "reference_answer": "Created note 3f2b8c1e-9d4a-4e6b-8a7c-1b2c3d4e5f60 at 2025-06-01T10:22:33.123456.",
     "rubric": {"tool_chain": [{"tool_name": "add_note", "parameters": {"contact_id": "C-1", "text": "call back Monday"}}]}},
    {"id": "q3", "question": "How many contacts live in London?", "answer": "2",
     "rubric": [{"name": "search_contacts", "arguments": "{\"city\": \"London\"}"}]},
    {"id": "q4", "task": "Change Alan Turing's (C-3) email to alan@manchester.example and tell me the record.",
     "reference_answer": {"contact_id": "C-3", "email": "alan@manchester.example", "updated_at": "2025-06-01T10:25:00", "token": "9f8e7d6c5b4a3f2e"},
     "rubric": {"verified_tool_chain": [{"function": {"name": "update_email", "arguments": {"contact_id": "C-3", "email": "alan@manchester.example"}}}]}},
    {"id": "q5", "task": "Note 'met at conference' on C-3, then tell me how many notes C-3 has.", "reference_answer": 1,
     "rubric": {"tool_chain": [{"tool": "add_note", "args": {"contact_id": "C-3", "text": "met at conference"}},
                               {"tool": "count_notes", "args": {"contact_id": "C-3"}}]}},
    {"id": "bad-tool", "task": "Delete contact C-1.", "reference_answer": "Deleted.",
     "rubric": {"tool_chain": [{"tool_name": "delete_contact", "parameters": {"contact_id": "C-1"}}]}},
    {"id": "bad-call", "task": "What is the email of C-9?", "reference_answer": "none",
     "rubric": {"tool_chain": [{"tool_name": "get_contact", "parameters": {"contact_id": "C-9"}}]}},
    {"id": "no-check", "task": "Say hello to the CRM.", "reference_answer": "hello there",
     "rubric": {"tool_chain": [{"tool_name": "search_contacts", "parameters": {"city": "Paris"}}]}},
    {"id": "no-chain", "task": "Anything.", "reference_answer": "x", "rubric": {"criteria": ["polite"]}},
]

HOSTILE = {
    "ping": ("Answer pong.", {}, [], '''
def ping(**_extra):
    return {"pong": True}
'''),
    "read_file": ("Read any file.", {"path": {"type": "string"}}, ["path"], '''
def read_file(path, **_extra):
    with open(path) as f:
        return {"text": f.read()[:200]}
'''),
    "write_file": ("Write any file.", {"path": {"type": "string"}, "text": {"type": "string"}}, ["path", "text"], '''
def write_file(path, text, **_extra):
    with open(path, "w") as f:
        f.write(text)
    return {"written": path}
'''),
    "delete_file": ("Delete any file.", {"path": {"type": "string"}}, ["path"], '''
import os
def delete_file(path, **_extra):
    os.remove(path)
    return {"deleted": path}
'''),
    "tcp": ("Open a TCP connection.", {"host": {"type": "string"}, "port": {"type": "integer"}}, ["host", "port"], '''
import socket
def tcp(host, port, **_extra):
    s = socket.create_connection((host, port), timeout=2)
    s.sendall(b"escaped")
    return {"connected": True}
'''),
    "udp": ("Send a UDP datagram.", {"host": {"type": "string"}, "port": {"type": "integer"}}, ["host", "port"], '''
import socket
def udp(host, port, **_extra):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.sendto(b"escaped", (host, port))
    return {"sent": True}
'''),
    "spawn": ("Start children that try to outlive the episode.", {"how": {"type": "string", "enum": ["fork", "forkpty", "daemon"]}}, ["how"], '''
import os, pty, time
def spawn(how, **_extra):
    marker = os.environ["MCP_DB_DIR"] + "/alive-" + how
    if how == "forkpty":
        pid, fd = pty.fork()
    else:
        pid = os.fork()
    if pid == 0:
        if how == "daemon":
            os.setsid()
            if os.fork():
                os._exit(0)
        while True:  # prove liveness by touching a file in the copy; the test watches it from outside
            with open(marker, "w") as f:
                f.write(str(time.monotonic()))
            time.sleep(0.05)
    return {"child": pid}
'''),
    "fork_bomb": ("Fork without end.", {}, [], '''
import os
def fork_bomb(**_extra):
    n = 0
    try:
        while n < 10000:
            if os.fork() == 0:
                import time
                time.sleep(30)
                os._exit(0)
            n += 1
    except OSError as exc:
        return {"forked": n, "stopped": str(exc)}
    return {"forked": n}
'''),
    "memory_bomb": ("Allocate gigabytes.", {"gb": {"type": "integer"}}, ["gb"], '''
def memory_bomb(gb, **_extra):
    block = bytearray(gb * 1024 ** 3)
    return {"allocated": len(block)}
'''),
    "fork_memory": ("Children that together hold more memory than allowed.", {"children": {"type": "integer"}, "mb": {"type": "integer"}},
                    ["children", "mb"], '''
import os, time
def fork_memory(children, mb, **_extra):
    pids = []
    for _ in range(children):
        pid = os.fork()
        if pid == 0:
            block = b"x" * (mb * 2 ** 20)  # written, so really resident
            time.sleep(1)
            os._exit(len(block) > 0)
        pids.append(pid)
    return {"exits": [os.waitpid(p, 0)[1] for p in pids]}
'''),
    "big_file": ("Write a huge file in the copy.", {"mb": {"type": "integer"}}, ["mb"], '''
import os
def big_file(mb, **_extra):
    with open(os.path.join(os.environ["MCP_DB_DIR"], "big.bin"), "wb") as f:
        for _ in range(mb):
            f.write(b"x" * 1024 * 1024)
    return {"written_mb": mb}
'''),
    "tamper": ("Try to lift the guard.", {"path": {"type": "string"}}, ["path"], '''
import os, resource, sys
def tamper(path, **_extra):
    tried = {}
    sys.audit_hooks_cleared = True  # nothing in the interpreter guards us: the limits are the kernel's
    for name, attempt in (("raise_nproc", lambda: resource.setrlimit(resource.RLIMIT_NPROC, (10 ** 6, 10 ** 6))),
                          ("raise_memory", lambda: resource.setrlimit(resource.RLIMIT_AS, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))),
                          ("setuid_root", lambda: os.setuid(0)),
                          ("write_root", lambda: open("/escaped", "w").write("x")),
                          ("write_usr", lambda: open("/usr/escaped", "w").write("x")),
                          ("write_outside", lambda: open(path, "w").write("tampered")),
                          ("chroot", lambda: os.chroot("/"))):
        try:
            attempt()
            tried[name] = "succeeded"
        except Exception as exc:
            tried[name] = type(exc).__name__
    tried["uid"] = os.getuid()
    return tried
'''),
    "noisy": ("Print megabytes.", {}, [], '''
import os
def noisy(**_extra):
    print("x" * 2 ** 21)
    os.write(2, b"y" * 2 ** 20)
    return {"printed": True}
'''),
    "spin": ("Loop forever.", {}, [], '''
def spin(**_extra):
    while True:
        pass
'''),
    # Attacks on the host's side: its reads, its parser, its disk and its CPU (issue 35).
    "half_line": ("Write half a reply line, then sleep.", {}, [], '''
import os, time
def half_line(**_extra):
    os.write(1, b'{"ok": true, "result": {"par')
    time.sleep(600)
'''),
    "raw_reply": ("Write a hostile reply line straight to the protocol pipe.", {"kind": {"type": "string", "enum": ["deep", "digits", "huge"]},
                  "size": {"type": "integer"}}, ["kind", "size"], '''
import os
def raw_reply(kind, size, **_extra):
    if kind == "deep":
        line = b"[" * size + b"]" * size
    elif kind == "digits":
        line = b'{"ok": true, "result": ' + b"7" * size + b"}"
    else:
        line = b'{"ok": true, "result": "' + b"x" * size + b'"}'
    os.write(1, line + b"\\n")
    return {"written": len(line)}
'''),
    "deep_result": ("Return a value nested deeper than any parser recurses.", {"size": {"type": "integer"}}, ["size"], '''
def deep_result(size, **_extra):
    value = []
    for _ in range(size):
        value = [value]
    return {"deep": value}
'''),
    "hostile_data": ("Write a data file that is too deep, holds a huge integer or is big.", {"kind": {"type": "string",
                     "enum": ["deep", "digits", "big"]}, "size": {"type": "integer"}}, ["kind", "size"], '''
import os
def hostile_data(kind, size, **_extra):
    with open(os.path.join(os.environ["MCP_DB_DIR"], "state.json"), "w") as f:
        if kind == "deep":
            f.write("[" * size + "]" * size)
        elif kind == "digits":
            f.write('{"n": ' + "7" * size + "}")
        else:
            f.write('{"blob": "' + "x" * size + '"}')
    return {"kind": kind}
'''),
    "many_files": ("Create many small files in the copy.", {"n": {"type": "integer"}}, ["n"], '''
import os
def many_files(n, **_extra):
    made = 0
    try:
        for i in range(n):
            with open(os.path.join(os.environ["MCP_DB_DIR"], f"f{i}.txt"), "w") as f:
                f.write("x")
            made += 1
    except OSError as exc:
        return {"made": made, "stopped": str(exc)}
    return {"made": made}
'''),
    "fill_disk": ("Write many large files in the copy (each under the per-file cap).", {"files": {"type": "integer"}, "mb": {"type": "integer"}},
                  ["files", "mb"], '''
import os
def fill_disk(files, mb, **_extra):
    written = 0
    try:
        for i in range(files):
            with open(os.path.join(os.environ["MCP_DB_DIR"], f"big{i}.bin"), "wb") as f:
                for _ in range(mb):
                    f.write(b"x" * 2 ** 20)
                    written += 1
    except OSError as exc:
        return {"written_mb": written, "stopped": str(exc)}
    return {"written_mb": written}
'''),
    "set_order": ("Return a set of words as a list (its order follows string hashing).", {}, [], '''
def set_order(**_extra):
    return {"order": list({f"word{i}" for i in range(20)})}
'''),
    "spin_thread": ("Leave a thread spinning in the worker.", {}, [], '''
import threading
def spin_thread(**_extra):
    def spin():
        while True:
            pass
    threading.Thread(target=spin, daemon=True).start()
    return {"started": True}
'''),
    "spin_children": ("Start children that spin, and either return or wait for them.", {"n": {"type": "integer"}, "wait": {"type": "boolean"}},
                      ["n", "wait"], '''
import os
def spin_children(n, wait, **_extra):
    pids = []
    for _ in range(n):
        pid = os.fork()
        if pid == 0:
            while True:
                pass
        pids.append(pid)
    if wait:
        for pid in pids:
            os.waitpid(pid, 0)
    return {"children": pids}
'''),
}


def _checkpoint(tools: dict, taxonomy: dict, description: str, prelude: str = "") -> dict:
    schemas = [{"name": name, "description": desc, "parameters": {"type": "object", "properties": props, "required": req},
                "implementation": prelude + src} for name, (desc, props, req, src) in tools.items()]
    return {"metadata": {"taxonomy": taxonomy, "description": description}, "data": {"ToolDesignAgent": {"tool_schemas": schemas}}}


def write_release(root: str | Path, hostile: bool = True) -> Path:
    """Write the fixture release under `root` (with the hostile environment or not); returns the `environment_mix` folder."""
    mix = Path(root) / "environment_mix"
    crm = mix / "crm_logger"
    crm.mkdir(parents=True, exist_ok=True)
    (crm / "contacts.json").write_text(json.dumps(CONTACTS, indent=2))
    (crm / "notes.json").write_text("[]")
    (crm / "tool_call_logs.json").write_text(json.dumps({"logs": []}))
    (mix / "crm_logger_step4_checkpoint.json").write_text(json.dumps(_checkpoint(
        CRM_TOOLS, {"L1_name": "Business & Productivity", "L2_name": "CRM & Sales", "L3_name": "Contact Management"},
        "A contact book with notes.", prelude=LOG)))
    (mix / "questions").mkdir(exist_ok=True)
    (mix / "questions" / "crm_logger.json").write_text(json.dumps(QUESTIONS, indent=1))
    if not hostile:
        return mix
    hostile = mix / "hostile"
    hostile.mkdir(exist_ok=True)
    (hostile / "state.json").write_text(json.dumps({"ok": True}))
    (hostile / "hostile_step4_checkpoint.json").write_text(json.dumps(_checkpoint(  # inside its folder: the other accepted place
        HOSTILE, {"L1_name": "Security", "L2_name": "Red Team", "L3_name": "Sandbox Escapes"}, "Tools that try to escape.")))
    return mix




# ------------------------------------------------------------------------------------------------------------
# The release as published (issue 35): 7-digit environment ids and questions/<id>.json =
# {"env_id", "name", "tasks": [{"task", "reference_answer": <JSON text>, "grading_rubric": {"success_criteria",
# "verified_tool_chain": [{"tool", "args"}]}}]}. Reference answers carry the authors' ids and times, not a replay's.

SHOP_TOOLS = {
    "find_customer": ("Find a customer by email.", {"email": {"type": "string"}}, ["email"], '''
def find_customer(email, **_extra):
    for c in _load("customers.json")["customers"]:
        if c["email"].lower() == email.lower():
            return c
    return {"error": {"code": "not_found", "message": f"No customer with email {email}."}}
'''),
    "list_orders": ("A customer's orders, newest first.", {"customer_id": {"type": "string"}}, ["customer_id"], '''
def list_orders(customer_id, **_extra):
    orders = [o for o in _load("orders.json")["orders"] if o["customer_id"] == customer_id]
    return {"customer_id": customer_id, "orders": sorted(orders, key=lambda o: o["placed"], reverse=True)}
'''),
    "cancel_order": ("Cancel an order that has not shipped; the refund starts at once.", {"order_id": {"type": "string"}}, ["order_id"], '''
import uuid
from datetime import datetime
def cancel_order(order_id, **_extra):
    data = _load("orders.json")
    for o in data["orders"]:
        if o["order_id"] == order_id:
            if o["status"] != "processing":
                return {"error": {"code": "invalid_state", "message": f"Order {order_id} is {o['status']}; only processing orders can be cancelled."}}
            o.update(status="cancelled", cancelled_at=datetime.now().isoformat(), refund_id=str(uuid.uuid4()))
            _save("orders.json", data)
            return o
    return {"error": {"code": "not_found", "message": f"Order {order_id} not found."}}
'''),
    "issue_gift_code": ("Issue a gift code to a customer.", {"customer_id": {"type": "string"}}, ["customer_id"], '''
def issue_gift_code(customer_id, **_extra):
    with open("/dev/urandom", "rb") as f:  # read straight from the device: nothing the worker freezes
        code = f.read(6).hex().upper()
    data = _load("customers.json")
    data.setdefault("gift_codes", []).append({"customer_id": customer_id, "code": code})
    _save("customers.json", data)
    return {"customer_id": customer_id, "code": code}
'''),
}

SHOP_IO = '''
import json, os

def _load(name):
    with open(os.path.join(os.environ["MCP_DB_DIR"], name)) as f:
        return json.load(f)

def _save(name, data):
    with open(os.path.join(os.environ["MCP_DB_DIR"], name), "w") as f:
        json.dump(data, f, indent=2)
'''

LIBRARY_TOOLS = {
    "find_book": ("Find a book by title.", {"title": {"type": "string"}}, ["title"], '''
def find_book(title, **_extra):
    for b in _load("books.json"):
        if b["title"].lower() == title.lower():
            return b
    return {"error": {"code": "not_found", "message": f"No book titled {title}."}}
'''),
    "lend_book": ("Lend a copy of a book to a member.", {"isbn": {"type": "string"}, "member_id": {"type": "string"}}, ["isbn", "member_id"], '''
from datetime import date, timedelta
def lend_book(isbn, member_id, **_extra):
    books = _load("books.json")
    book = next((b for b in books if b["isbn"] == isbn), None)
    if book is None or book["copies_available"] < 1:
        return {"error": {"code": "unavailable", "message": f"No copy of {isbn} to lend."}}
    book["copies_available"] -= 1
    _save("books.json", books)
    loans = _load("loans.json")
    loan = {"loan_id": f"L-{len(loans) + 1:04d}", "isbn": isbn, "member_id": member_id, "due": (date.today() + timedelta(days=21)).isoformat()}
    loans.append(loan)
    _save("loans.json", loans)
    return loan
'''),
}

PUBLISHED_QUESTIONS = {
    "2040117": ("Contact book", CONTACTS, [
        {"task": "Hi, I need to send Ada Byron the workshop invite today but I lost her address. Her contact id is C-2. "
                 "What email do we have on file for her?",
         "reference_answer": json.dumps({"contact_id": "C-2", "name": "Ada Byron", "email": "ada@analytical.example", "city": "London"}),
         "grading_rubric": {"success_criteria": ["Step 1 returns the contact record for C-2 with the email ada@analytical.example."],
                            "verified_tool_chain": [{"tool": "get_contact", "args": {"contact_id": "C-2"}}]}},
        {"task": "Please log a note 'call back Monday' on Grace Hopper's record (C-1) so the team knows to follow up after her trip.",
         "reference_answer": json.dumps({"note_id": "3f2b8c1e-9d4a-4e6b-8a7c-1b2c3d4e5f60", "contact_id": "C-1", "text": "call back Monday",
                                         "created_at": "2025-06-01T10:22:33.123456"}),
         "grading_rubric": {"success_criteria": ["Step 1 returns the new note for C-1 with the text 'call back Monday', a note_id and a created_at time."],
                            "verified_tool_chain": [{"tool": "add_note", "args": {"contact_id": "C-1", "text": "call back Monday"}}]}},
        {"task": "Alan Turing (C-3) has moved to Manchester. Please change his email to alan@manchester.example and add the note "
                 "'moved to Manchester' so sales does not write to the old address.",
         "reference_answer": json.dumps({"note_id": "0a9b8c7d-6e5f-4a3b-9c2d-1e0f9a8b7c6d", "contact_id": "C-3", "text": "moved to Manchester",
                                         "created_at": "2025-06-01T10:25:41.000012"}),
         "grading_rubric": {"success_criteria": ["Step 1 returns C-3 with the email alan@manchester.example and an updated_at time.",
                                                 "Step 2 returns a note for C-3 with the text 'moved to Manchester'.",
                                                 "The assistant confirms both changes to the user."],
                            "verified_tool_chain": [{"tool": "update_email", "args": {"contact_id": "C-3", "email": "alan@manchester.example"}},
                                                    {"tool": "add_note", "args": {"contact_id": "C-3", "text": "moved to Manchester"}}]}},
        {"task": "Before I call Grace Hopper (C-1) I want to know how many notes we already have on her, so I don't repeat myself.",
         "reference_answer": json.dumps({"contact_id": "C-1", "notes": 0}),
         "grading_rubric": {"success_criteria": ["Step 1 returns 0 notes for C-1."],
                            "verified_tool_chain": [{"tool": "count_notes", "args": {"contact_id": "C-1"}}]}},
    ]),
    "3115020": ("Online shop orders", None, [
        {"task": "I'm Lena Fischer (lena.fischer@example.com). I ordered a desk lamp last week but found one in a shop near me, "
                 "so please cancel that order before it ships.",
         "reference_answer": json.dumps({"order_id": "O-7", "customer_id": "CU-204", "item": "Desk lamp", "total": 39.9, "placed": "2025-02-27",
                                         "status": "cancelled", "cancelled_at": "2025-03-02T11:04:55.118270",
                                         "refund_id": "9c0e5d1a-7b3f-4e2a-8d6c-5b4a3f2e1d0c"}),
         "grading_rubric": {"success_criteria": ["Step 1 returns customer CU-204 for lena.fischer@example.com.",
                                                 "Step 2 lists the orders of CU-204, including O-7 (Desk lamp) with status 'processing'.",
                                                 "Step 3 returns O-7 with status 'cancelled', a refund_id and a cancelled_at time.",
                                                 "The assistant tells Lena that her refund is on its way."],
                            "verified_tool_chain": [{"tool": "find_customer", "args": {"email": "lena.fischer@example.com"}},
                                                    {"tool": "list_orders", "args": {"customer_id": "CU-204"}},
                                                    {"tool": "cancel_order", "args": {"order_id": "O-7"}}]}},
        {"task": "My email is lena.fischer@example.com. What did my most recent order cost? I need it for my expense report.",
         "reference_answer": json.dumps({"customer_id": "CU-204", "orders": [
             {"order_id": "O-7", "customer_id": "CU-204", "item": "Desk lamp", "total": 39.9, "placed": "2025-02-27", "status": "processing"},
             {"order_id": "O-3", "customer_id": "CU-204", "item": "Notebook set", "total": 12.5, "placed": "2025-01-14", "status": "delivered"}]}),
         "grading_rubric": {"success_criteria": ["Step 1 returns customer CU-204.", "Step 2 returns O-7 first, with a total of 39.9."],
                            "verified_tool_chain": [{"tool": "find_customer", "args": {"email": "lena.fischer@example.com"}},
                                                    {"tool": "list_orders", "args": {"customer_id": "CU-204"}}]}},
        {"task": "My last parcel arrived two weeks late. Could you give customer CU-204 a gift code as an apology?",
         "reference_answer": json.dumps({"customer_id": "CU-204", "code": "7F3A9C21B0DE"}),
         "grading_rubric": {"success_criteria": ["Step 1 returns a gift code for CU-204."],
                            "verified_tool_chain": [{"tool": "issue_gift_code", "args": {"customer_id": "CU-204"}}]}},
        {"task": "Refund order O-3 to my card, please.",
         "reference_answer": json.dumps({"order_id": "O-3", "refunded": True}),
         "grading_rubric": {"success_criteria": ["Step 1 refunds O-3."],
                            "verified_tool_chain": [{"tool": "refund_payment", "args": {"order_id": "O-3"}}]}},
    ]),
    "5066731": ("Neighbourhood library", None, [
        {"task": "My book club is reading Dune next month. How many copies can still be borrowed?",
         "reference_answer": json.dumps({"isbn": "978-0441013593", "title": "Dune", "copies_available": 2}),
         "grading_rubric": {"success_criteria": ["Step 1 returns Dune with 2 copies_available."],
                            "verified_tool_chain": [{"tool": "find_book", "args": {"title": "Dune"}}]}},
        {"task": "I'm member M-88 and I'd like to borrow Dune for the book club; please put a copy on my card.",
         "reference_answer": json.dumps({"loan_id": "L-0001", "isbn": "978-0441013593", "member_id": "M-88", "due": "2025-05-02"}),
         "grading_rubric": {"success_criteria": ["Step 1 returns Dune's isbn 978-0441013593.",
                                                 "Step 2 returns loan L-0001 of 978-0441013593 for M-88 with a due date."],
                            "verified_tool_chain": [{"tool": "find_book", "args": {"title": "Dune"}},
                                                    {"tool": "lend_book", "args": {"isbn": "978-0441013593", "member_id": "M-88"}}]}},
    ]),
}

CUSTOMERS = {"customers": [{"customer_id": "CU-204", "name": "Lena Fischer", "email": "lena.fischer@example.com"},
                           {"customer_id": "CU-311", "name": "Omar Haddad", "email": "omar.haddad@example.com"}]}
ORDERS = {"orders": [
    {"order_id": "O-3", "customer_id": "CU-204", "item": "Notebook set", "total": 12.5, "placed": "2025-01-14", "status": "delivered"},
    {"order_id": "O-7", "customer_id": "CU-204", "item": "Desk lamp", "total": 39.9, "placed": "2025-02-27", "status": "processing"},
    {"order_id": "O-9", "customer_id": "CU-311", "item": "Desk lamp", "total": 39.9, "placed": "2025-02-28", "status": "processing"}]}
BOOKS = [{"isbn": "978-0441013593", "title": "Dune", "copies_available": 2},
         {"isbn": "978-0547928227", "title": "The Hobbit", "copies_available": 0}]


def write_published_release(root: str | Path) -> Path:
    """Three environments and their questions exactly in the published shape; returns the `environment_mix` folder."""
    mix = Path(root) / "environment_mix"
    (mix / "questions").mkdir(parents=True, exist_ok=True)
    envs = {"2040117": (CRM_TOOLS, LOG, {"contacts.json": CONTACTS, "notes.json": [], "tool_call_logs.json": {"logs": []}},
                        {"L1_name": "Business & Productivity", "L2_name": "CRM & Sales", "L3_name": "Contact Management"}),
            "3115020": (SHOP_TOOLS, SHOP_IO, {"customers.json": CUSTOMERS, "orders.json": ORDERS},
                        {"L1_name": "Shopping", "L2_name": "E-commerce", "L3_name": "Order Management"}),
            "5066731": (LIBRARY_TOOLS, SHOP_IO, {"books.json": BOOKS, "loans.json": []},
                        {"L1_name": "Education", "L2_name": "Libraries", "L3_name": "Lending"})}
    for env_id, (tools, prelude, files, taxonomy) in envs.items():
        folder = mix / env_id
        folder.mkdir(exist_ok=True)
        for name, data in files.items():
            (folder / name).write_text(json.dumps(data, indent=2))
        name, _, tasks = PUBLISHED_QUESTIONS[env_id]
        (mix / f"{env_id}_step4_checkpoint.json").write_text(json.dumps(_checkpoint(tools, taxonomy, name + ".", prelude=prelude)))
        (mix / "questions" / f"{env_id}.json").write_text(json.dumps({"env_id": env_id, "name": name, "tasks": tasks}, indent=1))
    return mix


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    root = args[0] if args else "release-fixture"
    if "--published" in sys.argv:
        print(write_published_release(root))
    else:
        print(write_release(root, hostile="--hostile" in sys.argv))
