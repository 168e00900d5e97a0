"""Every benchmark suite, behind one interface; `agentworld bench` and the old `agentworld_gym.bench`
path are thin callers of this package.

A suite is a `Suite` (suites.core): its `items`, `item_id` and `groups` (category, difficulty) per
item, `play(policy spec, loaded policy, items, seed) -> [success per item]` (each suite grades its
own items while it plays them) and `nulls(items, seed) -> {null baseline: [success per item]}`
(do-nothing, constant answers, first id, random). `evaluate(suite, policy)` turns that into n,
mean +- std over runs, a 95% interval and the best null baseline, overall and per group.

Suites (BUILDERS name -> function returning a Suite; `run_suite(name, policy)` does all of it):

* ``heldout`` - frozen task files in this folder (heldout/, heldout_v3/; package data), `core`;
* ``bfcl`` - BFCL single-turn (`suites.bfcl`, BFCL's AST rules) and multi-turn
  (`suites.bfcl_multi_turn`, API state after every turn) categories;
* ``tau2`` - every installed tau2 domain over its MCP server (`suites.tau2`);
* ``release`` - an Agent-World release folder's own questions, each played on its release environment
  (`release_suite(path)`; `suites.release`: loading, replay checks and grading); it needs the folder, so
  `run_suite`/`agentworld bench --suite all` leave it out: `evaluate(release_suite(path), policy)`.
"""

from __future__ import annotations

from .core import (
    ALL,
    SUITES,
    Suite,
    best_null,
    bfcl_suite,
    diff_interval,
    evaluate,
    heldout_suite,
    heldout_themes,
    load_heldout,
    over_seeds,
    pass_hat_k,
    pass_k_table,
    play_nulls,
    release_suite,
    run_all,
    run_bfcl,
    run_heldout,
    run_suite,
    run_tau2,
    stratified_sample,
    suites_dir,
    tau2_suite,
    wilson,
)

BUILDERS = {"heldout": heldout_suite, "bfcl": bfcl_suite, "tau2": tau2_suite, "release": release_suite}

__all__ = ["ALL", "BUILDERS", "SUITES", "Suite", "best_null", "bfcl_suite", "diff_interval", "evaluate", "heldout_suite",
           "heldout_themes", "load_heldout", "over_seeds", "pass_hat_k", "pass_k_table", "play_nulls", "release_suite", "run_all", "run_bfcl",
           "run_heldout", "run_suite", "run_tau2", "stratified_sample", "suites_dir", "tau2_suite", "wilson"]
