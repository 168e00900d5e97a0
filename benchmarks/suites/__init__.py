"""Frozen evaluation suites (task files), installed as package data under `agentworld_gym.suites`
so `agentworld bench --suite ...` works from a wheel as well as from a checkout."""
