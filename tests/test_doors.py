"""Every door checks its values before any work or write (issue 38 item 4).

The command-line table is built from the parser itself: every subcommand, every option. Each numeric option
must have a rule (a new option without one fails `test_every_numeric_option_has_a_rule`), and every value its
rule refuses is tried on the real `agentworld` main with the command's work replaced by a tripwire: the error
must be one typed line naming the option, the work must not start, and the folder must stay empty.
"""

import argparse
import json
import math
import os
from pathlib import Path

import gymnasium as gym
import pytest

import agentworld_gym
from agentworld_gym import cli
from agentworld_gym.checks import COMMAND_RULES, OPTION_RULES, ExistingPath, Levels, Number, atomic_output
from agentworld_gym.errors import AgentWorldError, ConfigError, MissingFileError

gym.register_envs(agentworld_gym)


def _commands():
    """(command path, its parser) for every leaf subcommand."""
    out = []

    def walk(parser, path):
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs:
            out.append((path, parser))
        for action in subs:
            for name, sub in dict(action.choices).items():
                walk(sub, path + (name,))

    walk(cli.build_parser(), ())
    return out


COMMANDS = _commands()


def _rule(command: tuple, dest: str):
    return {**OPTION_RULES, **COMMAND_RULES.get(command[-1], {})}.get(dest)


def _options(parser):
    return [a for a in parser._actions if not isinstance(a, (argparse._HelpAction, argparse._SubParsersAction))]


def test_the_table_covers_every_subcommand():
    names = {" ".join(c) for c, _ in COMMANDS}
    assert {"play", "bench", "synth", "serve", "train sft", "train grpo", "evolve", "record", "diagnose", "discover"} <= names
    assert len(names) >= 15


def test_every_numeric_option_has_a_rule():
    missing = [f"{' '.join(c)} --{a.dest}" for c, p in COMMANDS for a in _options(p)
               if a.type in (int, float) and a.choices is None and _rule(c, a.dest) is None]
    assert missing == [], f"options with no value rule: {missing}"


def _bad_values(rule) -> list[str]:
    if isinstance(rule, Number):
        bad = []
        if rule.low is not None:
            bad.append(str(rule.low if rule.open_low else (rule.low - 1 if rule.integer else rule.low - 0.5)))
        if rule.high is not None:
            bad.append(str(rule.high + 1))
        if not rule.integer:
            bad += ["nan", "inf", "-inf"]
        return [str(int(float(b))) if rule.integer else b for b in bad]
    if isinstance(rule, Levels):
        return ["0,1", "6", "1,x"]
    if isinstance(rule, ExistingPath):
        return ["no/such/file.jsonl"]
    return []


def _base_argv(command: tuple, parser, given: Path) -> list[str]:
    """The command with what it requires: positionals (a theme, an existing file) and required options."""
    argv = list(command)
    for a in _options(parser):
        if a.option_strings and not a.required:
            continue
        value = a.choices and next(iter(a.choices)) or ("finance" if a.dest == "theme" else str(given))
        if a.option_strings:
            argv += [a.option_strings[-1], "out.jsonl" if a.dest == "out" else value]
        elif a.nargs not in ("?", "*"):
            argv.append(str(value))
    return argv


CASES = [(c, a.option_strings[-1], a.dest, bad) for c, p in COMMANDS for a in _options(p) if a.option_strings and a.choices is None
         for bad in _bad_values(_rule(c, a.dest))]


@pytest.fixture
def tripwire(monkeypatch):
    """Every command's work replaced by a function that fails the test if it is reached."""
    real = cli.build_parser

    def build():
        parser = real()
        for _, sub in _commands_of(parser):
            sub.set_defaults(func=lambda args: pytest.fail("the command started its work before its values were checked"))
        return parser

    def _commands_of(parser):
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs:
            yield (), parser
        for action in subs:
            for sub in dict(action.choices).values():
                yield from _commands_of(sub)

    monkeypatch.setattr(cli, "build_parser", build)


@pytest.mark.parametrize("command, flag, dest, bad", CASES, ids=[f"{' '.join(c)} {f} {b}" for c, f, _, b in CASES])
def test_bad_option_values_are_refused_before_any_work(tmp_path, monkeypatch, capsys, tripwire, command, flag, dest, bad):
    monkeypatch.chdir(tmp_path)
    given = tmp_path / "given.jsonl"
    given.write_text("{}\n")
    parser = dict(COMMANDS)[command]
    argv = _base_argv(command, parser, given) + [f"{flag}={bad}"]
    code = cli.main(argv)
    err = capsys.readouterr().err.strip()
    assert code == 2, (argv, err)
    label = max(next(a for a in _options(parser) if a.dest == dest).option_strings, key=len)
    assert err.startswith(f"agentworld: error: Expected {label} "), err  # named as the user typed it
    assert "\n" not in err
    assert sorted(os.listdir(tmp_path)) == ["given.jsonl"], "a refused command left files behind"


# ---------------------------------------------------------------- outputs and run folders

def test_synth_never_truncates_an_existing_output(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "tasks.jsonl"
    out.write_text('{"kept": true}\n')
    assert cli.main(["synth", "no-such-theme", "-o", str(out)]) == 2
    assert cli.main(["synth", "finance", "-n", "0", "-o", str(out)]) == 2
    assert cli.main(["synth", "finance", "-n", "3", "--seed", "-1", "-o", str(out)]) == 2
    assert out.read_text() == '{"kept": true}\n'

    from agentworld_gym.errors import TaskError
    from agentworld_gym.synthesis import cli as synth_cli

    real = synth_cli.synth_tasks

    def fails_midway(*args, **kwargs):
        yield next(real(*args, **kwargs))
        raise TaskError("Expected more tasks, got none (a failure after work began).")

    monkeypatch.setattr(synth_cli, "synth_tasks", fails_midway)
    assert cli.main(["synth", "finance", "-n", "3", "-o", str(out)]) == 2
    assert out.read_text() == '{"kept": true}\n'  # the failed run left the old file whole
    monkeypatch.setattr(synth_cli, "synth_tasks", real)
    assert cli.main(["synth", "finance", "-n", "3", "-o", str(out)]) == 0
    assert len(out.read_text().splitlines()) == 3
    assert sorted(os.listdir(tmp_path)) == ["tasks.jsonl"]  # no temporary file left


def test_synth_interrupted_keeps_the_tasks_written_so_far(tmp_path, monkeypatch):
    from agentworld_gym.synthesis import cli as synth_cli

    real = synth_cli.synth_tasks

    def interrupted(*args, **kwargs):
        gen = real(*args, **kwargs)
        yield next(gen)
        yield next(gen)
        raise KeyboardInterrupt

    monkeypatch.setattr(synth_cli, "synth_tasks", interrupted)
    out = tmp_path / "tasks.jsonl"
    assert cli.main(["synth", "finance", "-n", "5", "-o", str(out)]) == 130
    assert [json.loads(x)["theme"] for x in out.read_text().splitlines()] == ["finance", "finance"]
    assert sorted(os.listdir(tmp_path)) == ["tasks.jsonl"]


def test_atomic_output_leaves_the_old_file_on_failure(tmp_path):
    out = tmp_path / "o.txt"
    out.write_text("old")
    with pytest.raises(RuntimeError), atomic_output(out) as f:
        f.write("new, half")
        raise RuntimeError("boom")
    assert out.read_text() == "old" and sorted(os.listdir(tmp_path)) == ["o.txt"]
    with pytest.raises(MissingFileError, match="Create it first"), atomic_output(tmp_path / "no" / "o.txt"):
        pass
    with pytest.raises(ConfigError, match="Name a file inside it"), atomic_output(tmp_path):
        pass


@pytest.mark.parametrize("argv", [["train", "sft", "--epochs", "0"], ["train", "grpo", "--steps", "-1"],
                                  ["train", "sft", "--save-every", "0"], ["train", "sft", "--batch-size", "0"],
                                  ["train", "grpo", "--tasks-per-step", "0"], ["train", "grpo", "--group-size", "0"],
                                  ["train", "grpo", "--lr", "nan"], ["train", "sft", "--lr", "nan"],
                                  ["train", "sft", "--difficulties", "0,9"], ["train", "grpo", "--task-kind", "grpah"]])
def test_training_commands_refuse_bad_values_without_a_run_folder(tmp_path, monkeypatch, capsys, argv):
    monkeypatch.chdir(tmp_path)
    assert cli.main([*argv, "--out-dir", "run"]) == 2
    assert "Expected" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


def test_a_training_run_that_fails_before_its_first_checkpoint_leaves_no_folder(tmp_path):
    from agentworld_gym.train import common
    from agentworld_gym.train.sft import SFTConfig

    @common.cleans_up_new_run_folder
    def train(cfg):
        Path(cfg.out_dir).mkdir(parents=True)
        (Path(cfg.out_dir) / "metrics.jsonl").write_text("")
        if cfg.seed == 1:
            (Path(cfg.out_dir) / "ckpt-000001").mkdir()
        raise RuntimeError("model failed to load")

    for seed, kept in ((0, False), (1, True)):
        out = tmp_path / f"run{seed}"
        with pytest.raises(RuntimeError):
            train(SFTConfig(out_dir=str(out), seed=seed))
        assert out.exists() is kept  # a checkpoint to resume from is kept
    existing = tmp_path / "mine"
    existing.mkdir()
    with pytest.raises(FileExistsError):
        train(SFTConfig(out_dir=str(existing)))
    assert existing.exists()  # a folder the user had is never removed


# ---------------------------------------------------------------- public constructors

def _constructors():
    from agentworld_gym.wrappers import AdaptiveLevel, FixedLevel, HashedTranscriptObservation, LinearRamp, TaskSampler

    from agentworld_gym.env import AgentWorldEnv
    from agentworld_gym.multiagent import AssistantUserEnv
    from agentworld_gym.policies import RandomPolicy
    from agentworld_gym.train import GRPOConfig, SFTConfig
    from agentworld_gym.vector import make_vector_env

    make = lambda: gym.make("AgentWorld/finance-v0")  # noqa: E731
    return {
        "env scale=1e6": lambda: AgentWorldEnv("finance", scale=1e6),
        "env scale=nan": lambda: AgentWorldEnv("finance", scale=math.nan),
        "env scale=0": lambda: AgentWorldEnv("finance", scale=0),
        "env db_seed=-1": lambda: AgentWorldEnv("finance", db_seed=-1),
        "env max_turns=0": lambda: AgentWorldEnv("finance", max_turns=0),
        "env difficulty=0": lambda: AgentWorldEnv("finance", difficulty=0),
        "make scale=1e6": lambda: gym.make("AgentWorld/finance-v0", scale=1e6),
        "SFTConfig epochs=0": lambda: SFTConfig(epochs=0),
        "SFTConfig batch_size=0": lambda: SFTConfig(batch_size=0),
        "SFTConfig save_every=0": lambda: SFTConfig(save_every=0),
        "SFTConfig lr=nan": lambda: SFTConfig(lr=math.nan),
        "SFTConfig lr=0": lambda: SFTConfig(lr=0.0),
        "SFTConfig recovery_share=2": lambda: SFTConfig(recovery_share=2.0),
        "SFTConfig n_examples=0": lambda: SFTConfig(n_examples=0),
        "SFTConfig difficulties=(6,)": lambda: SFTConfig(difficulties=(6,)),
        "SFTConfig task_kind": lambda: SFTConfig(task_kind="grpah"),
        "GRPOConfig steps=-1": lambda: GRPOConfig(steps=-1),
        "GRPOConfig group_size=1": lambda: GRPOConfig(group_size=1),
        "GRPOConfig tasks_per_step=0": lambda: GRPOConfig(tasks_per_step=0),
        "GRPOConfig lr=inf": lambda: GRPOConfig(lr=math.inf),
        "GRPOConfig temperature=-1": lambda: GRPOConfig(temperature=-1.0),
        "GRPOConfig kl_coef=nan": lambda: GRPOConfig(kl_coef=math.nan),
        "GRPOConfig micro_batch=0": lambda: GRPOConfig(micro_batch=0),
        "GRPOConfig save_every=0": lambda: GRPOConfig(save_every=0),
        "FixedLevel(0)": lambda: FixedLevel(0),
        "LinearRamp episodes=0": lambda: LinearRamp(1, 5, 0),
        "AdaptiveLevel window=0": lambda: AdaptiveLevel(window=0),
        "TaskSampler weight=-1": lambda: TaskSampler(make(), theme_weights={"finance": -1.0}),
        "TaskSampler weight=nan": lambda: TaskSampler(make(), theme_weights={"finance": math.nan}),
        "HashedTranscriptObservation system_weight=nan": lambda: HashedTranscriptObservation(make(), system_weight=math.nan),
        "RandomPolicy p_submit=2": lambda: RandomPolicy(p_submit=2.0),
        "RandomPolicy p_submit=nan": lambda: RandomPolicy(p_submit=math.nan),
        "AssistantUserEnv max_turns=0": lambda: AssistantUserEnv(max_turns=0),
        "make_vector_env num_envs=0": lambda: make_vector_env("AgentWorld/finance-v0", 0),
    }


CONSTRUCTORS = list(_constructors())


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("case", CONSTRUCTORS)
def test_public_constructors_refuse_bad_values_with_a_typed_error(case):
    with pytest.raises(AgentWorldError) as caught:
        _constructors()[case]()
    message = str(caught.value)
    assert message.startswith("Expected") and "\n" not in message, message
