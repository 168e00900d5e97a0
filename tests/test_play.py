"""`agentworld play` driven through a real pseudo-terminal, as a person at a keyboard would."""

import contextlib
import os
import pty
import re
import select
import subprocess
import sys
import time

import pytest

SGR = re.compile(r"\x1b\[[0-9;]*m")
UP, CTRL_A = "\x1b[A", "\x01"


class Terminal:
    def __init__(self, args: list[str], tmp_path, **env):
        self.master, slave = pty.openpty()
        full_env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
        # own history file (under the cache) so earlier sessions cannot answer an Up key
        full_env.update(TERM="xterm", COLUMNS="100", AGENTWORLD_CACHE=os.environ.get("AGENTWORLD_CACHE", str(tmp_path / "cache")), **env)
        full_env["AGENTWORLD_PLAY_HISTORY"] = str(tmp_path / "history")
        self.proc = subprocess.Popen([sys.executable, "-m", "agentworld_gym.cli", "play", *args],
                                     stdin=slave, stdout=slave, stderr=slave, env=full_env, close_fds=True)
        os.close(slave)
        self.raw = ""
        self.seen = 0  # expect() looks only at output after the previous match

    def send(self, keys: str) -> None:
        os.write(self.master, keys.encode())

    def expect(self, text: str, timeout: float = 60) -> str:
        end = time.time() + timeout
        while True:
            plain = SGR.sub("", self.raw)
            at = plain.find(text, self.seen)
            if at >= 0:
                chunk, self.seen = plain[self.seen:at + len(text)], at + len(text)
                return chunk
            if time.time() > end or self.proc.poll() is not None and not select.select([self.master], [], [], 0)[0]:
                raise AssertionError(f"expected {text!r}; the terminal shows:\n{plain[-3000:]}")
            if select.select([self.master], [], [], 0.2)[0]:
                with contextlib.suppress(OSError):  # the child closed the terminal
                    self.raw += os.read(self.master, 65536).decode(errors="replace")

    def close(self) -> int:
        try:
            return self.proc.wait(timeout=30)
        finally:
            os.close(self.master)


def test_play_keeps_the_episode_until_the_player_means_to_end_it(tmp_path):
    t = Terminal(["finance", "--seed", "1"], tmp_path, NO_COLOR="1")
    t.expect("Policy:")  # the one prompt a model sees: instructions and business rules, then the tools
    assert "- get_card(card_id)" in t.expect("What is the spending limit of card CD-2018?")
    t.expect("turn 1/20 > ")

    t.send("help\r")  # a bare word is not an answer
    t.expect("Did you mean /help?")
    t.send("the limit on that card\r")  # plain text asks first; "no" keeps playing
    t.expect("Submit 'the limit on that card' as your final answer and end the episode? [y/N]")
    t.send("n\r")
    t.expect("Not submitted.")
    t.send("/tools get_card\r")
    t.expect("card_id (string, required)")
    t.send("/submt 1\r")
    t.expect("Unknown command '/submt'. Did you mean '/submit'?")
    t.expect("turn 1/20 > ")  # none of the above used a turn

    t.send('get_card(card_id="CD-2018")\r')
    assert '"spending_limit": 3513.2' in t.expect("turn 2/20 > ")
    t.send(UP + "\r")  # history: Up recalls the call
    assert "[get_card]" in t.expect("turn 3/20 > ")
    t.send('card_id="CD-2018")' + CTRL_A + "get_card(\r")  # editing: Ctrl-A jumps to the start of the line
    assert "[get_card]" in t.expect("turn 4/20 > ")

    t.send("/submit 3513.2\r")
    t.expect("Episode over: PASSED, reward 1.")
    t.expect("Answer: correct. You submitted \"3513.2\"; the expected answer is 3513.2 (compared as number, within 0.01).")
    t.expect('The gold solution: get_card(card_id="CD-2018") -> submit(answer=3513.2)')
    t.send("get_card(card_id=\"CD-2018\")\r")  # after the end nothing is sent to the env
    t.expect("The episode is over: /reset for a new one")
    t.send("/reset\r")
    t.expect("episode with seed 2")
    t.expect("turn 1/20 > ")
    t.send("/quit\r")
    assert t.close() == 0
    assert not SGR.search(t.raw), "NO_COLOR is set: no colour codes expected"


def test_play_explains_running_out_of_turns_and_uses_colour_on_a_terminal(tmp_path):
    t = Terminal(["finance", "--seed", "0", "--max-turns", "2"], tmp_path)
    t.expect("turn 1/2 > ")
    assert SGR.search(t.raw), "a colour terminal without NO_COLOR should get colours"
    t.send("/nothing\r")
    t.send('get_card(card_id="CD-0000")\r')
    t.expect("[get_card] Error")
    t.send('get_card(card_id="CD-0000")\r')
    t.expect("ran out of turns (2)")
    t.expect("Answer: missing. Nothing was submitted")
    t.expect("/reset for a new episode")
    t.expect("(over) > ")  # a Ctrl-D typed before readline owns the terminal can be lost, as on any terminal
    t.send("\x04")  # Ctrl-D leaves
    assert t.close() == 0


@pytest.mark.parametrize("choice, tty, no_color, expected", [
    ("auto", True, False, True), ("auto", True, True, False), ("auto", False, False, False),
    ("always", False, True, True), ("never", True, False, False)])
def test_colour_choice(monkeypatch, choice, tty, no_color, expected):
    from agentworld_gym.play import use_colour

    monkeypatch.setenv("TERM", "xterm")
    if no_color:
        monkeypatch.setenv("NO_COLOR", "")  # set, even empty, means no colour (no-color.org)
    else:
        monkeypatch.delenv("NO_COLOR", raising=False)
    stream = type("S", (), {"isatty": lambda self: tty})()
    assert use_colour(choice, stream) is expected


def test_the_verification_is_explained_in_words():
    from types import SimpleNamespace

    from agentworld_gym.play import explain

    task = SimpleNamespace(answer_type="text", tolerance=0.01, state_tables=("accounts", "transfers"))
    good = explain({"checks": {"answer": True, "state": True}, "expected_answer": '"ok"', "submitted_answer": '"OK"'}, task, False, 20)
    assert good == ['Answer: correct. You submitted "OK"; the expected answer is "ok" (compared as text).',
                    "Database: it ends exactly as the task asks (accounts, transfers match the gold solution replayed on a fresh copy)."]
    bad = explain({"checks": {"state": False}}, task, True, 5)
    assert bad[0] == "The episode ran out of turns (5) before an answer was submitted."
    assert bad[1].startswith("Database: it does not end as the task asks (accounts, transfers differ")


def test_play_a_pool_id(tmp_path):
    out = subprocess.run([sys.executable, "-m", "agentworld_gym.cli", "play", "pool-finance-markets", "--seed", "3"],
                         input="/task\n/quit\n", capture_output=True, text=True, timeout=120,
                         env={**os.environ, "AGENTWORLD_PLAY_HISTORY": str(tmp_path / "history")})
    assert out.returncode == 0, out.stderr
    assert out.stdout.count("Task:") == 2 and "turn 1/20 > " in out.stdout
