"""mlhub: a model hub: teams, models, datasets, fine-tune jobs, inference endpoints and API keys."""

from __future__ import annotations

from typing import Literal

from agentworld_gym.theme import Theme
from agentworld_gym.tools import WRITE, Db, ToolError, tool
from agentworld_gym.world import Table, ThemeSpec, choice_col, date_col, faker_col, fk_col, id_col, int_col, money_col

TRANSITIONS = {"queued": ("running", "cancelled"), "running": ("succeeded", "failed", "cancelled")}
MAX_RUNNING_ENDPOINTS = 2  # per model
FREE_INSTANCES = ("cpu-small",)
TOKEN_QUOTAS = (100_000, 1_000_000, 10_000_000)

SPEC = ThemeSpec(
    id="mlhub",
    title="Tensorforge Hub",
    category="AI & Machine Learning",
    subcategory="Model Hubs & LLM APIs",
    label="model hub",
    description="You help teams on the hub manage their models, datasets, fine-tune jobs, inference endpoints and API keys.",
    tables=(
        Table("teams", (
            id_col("team_id", "TM-", 101), faker_col("name", "company"), choice_col("plan", ["free", "pro", "enterprise"], [0.4, 0.4, 0.2]),
            int_col("gpu_quota_hours", 20, 400), money_col("gpu_hours_used", 0, 150),
        ), rows=20),
        Table("models", (
            id_col("model_id", "MD-"), fk_col("team_id", "teams"), choice_col("family", ["llama", "mistral", "qwen", "phi", "gemma", "falcon"]),
            choice_col("size_b", [1, 3, 7, 13, 34, 70], [0.15, 0.2, 0.3, 0.15, 0.1, 0.1], type="int"),
            choice_col("task", ["text-generation", "embedding", "classification", "summarization"], [0.5, 0.2, 0.15, 0.15]),
            choice_col("license", ["apache-2.0", "mit", "cc-by-nc", "proprietary"], [0.4, 0.25, 0.15, 0.2]),
            choice_col("visibility", ["public", "private"], [0.6, 0.4]), int_col("downloads", 0, 250_000),
        ), rows=50),
        Table("datasets", (
            id_col("dataset_id", "DS-", 3001), fk_col("team_id", "teams"), faker_col("name", "slug", unique=True),
            int_col("row_count", 1_000, 2_000_000), choice_col("license", ["apache-2.0", "mit", "cc-by-nc", "proprietary"], [0.4, 0.25, 0.15, 0.2]),
            choice_col("status", ["ready", "processing", "deprecated"], [0.75, 0.15, 0.1]),
        ), rows=30),
        Table("finetune_jobs", (
            id_col("finetune_job_id", "FJ-", 5001), fk_col("team_id", "teams"), fk_col("model_id", "models"), fk_col("dataset_id", "datasets"),
            money_col("gpu_hours", 1, 40), choice_col("status", ["queued", "running", "succeeded", "failed", "cancelled"], [0.15, 0.15, 0.5, 0.1, 0.1]),
            date_col("created_date", "2025-03-01", "2025-05-31"),
        ), rows=50),
        Table("endpoints", (
            id_col("endpoint_id", "EP-", 7001), fk_col("model_id", "models"),
            choice_col("instance", ["cpu-small", "gpu-a10", "gpu-a100", "gpu-h100"], [0.4, 0.3, 0.2, 0.1]), int_col("replicas", 1, 4),
            choice_col("status", ["running", "stopped", "failed"], [0.6, 0.3, 0.1]),
        ), rows=40),
        Table("api_keys", (
            id_col("api_key_id", "AK-", 9001), fk_col("team_id", "teams"), choice_col("label", ["production", "staging", "notebook", "ci"]),
            choice_col("monthly_token_quota", TOKEN_QUOTAS, [0.4, 0.4, 0.2], type="int"), int_col("tokens_used", 0, 900_000),
            choice_col("status", ["active", "revoked"], [0.85, 0.15]),
        ), rows=30),
    ),
    rules=(
        "Fine-tune jobs move queued -> running -> succeeded or failed; queued and running jobs can be cancelled; finished jobs never change.",
        "A fine-tune job needs estimated GPU hours (model size in billions x dataset rows / 2,000,000, at least 1) within the team's remaining "
        "GPU quota: quota minus hours used minus hours reserved by its queued and running jobs.",
        "Only ready datasets can be used. Private or proprietary models and proprietary datasets can be used only by their own team.",
        "A job that succeeds or fails charges its GPU hours to the team; a succeeded job registers the tuned model as a private model of the team.",
        f"Free-plan teams may deploy only on {', '.join(FREE_INSTANCES)} instances; a model has at most {MAX_RUNNING_ENDPOINTS} running endpoints.",
        "Revoked API keys cannot change; a key's monthly token quota cannot be set below the tokens it already used this month.",
    ),
    extra={"seed_repair": "agentworld_gym.envs.themes.mlhub:repair_seed", "rule_check": "agentworld_gym.envs.themes.mlhub:seed_violations"},
)


def repair_seed(rows: dict[str, list[dict]], rng) -> None:
    """Make the independently drawn seed rows obey the hub's rules: jobs use only models and datasets
    their team may use, every team stays within its GPU quota, free teams run only free instances, a
    model has at most two running endpoints, and no key has used more tokens than its quota."""
    teams = {t["team_id"]: t for t in rows["teams"]}
    models = {m["model_id"]: m for m in rows["models"]}
    for j in rows["finetune_jobs"]:
        m = models[j["model_id"]]
        if m["visibility"] == "private" or m["license"] == "proprietary":
            j["team_id"] = m["team_id"]
        usable = [d for d in rows["datasets"] if d["license"] != "proprietary" or d["team_id"] == j["team_id"]]
        if not any(d["dataset_id"] == j["dataset_id"] for d in usable):
            j["dataset_id"] = usable[int(rng.integers(len(usable)))]["dataset_id"]
    for t in rows["teams"]:
        reserved = sum(j["gpu_hours"] for j in rows["finetune_jobs"] if j["team_id"] == t["team_id"] and j["status"] in ("queued", "running"))
        need = t["gpu_hours_used"] + reserved
        if need > t["gpu_quota_hours"]:
            t["gpu_quota_hours"] = int(need) + int(rng.integers(5, 60))
    running: dict[str, int] = {}
    for e in rows["endpoints"]:
        team = teams[models[e["model_id"]]["team_id"]]
        if team["plan"] == "free":
            e["instance"] = "cpu-small"
        if e["status"] == "running":
            running[e["model_id"]] = running.get(e["model_id"], 0) + 1
            if running[e["model_id"]] > MAX_RUNNING_ENDPOINTS:
                e["status"] = "stopped"
    for k in rows["api_keys"]:
        if k["tokens_used"] > k["monthly_token_quota"]:
            k["tokens_used"] = int(k["tokens_used"] % k["monthly_token_quota"])


def seed_violations(conn) -> list[str]:
    """The hub rules a world breaks (empty for a valid world)."""
    out = []
    for t in conn.execute("SELECT team_id, gpu_quota_hours, gpu_hours_used FROM teams"):
        reserved = conn.execute("SELECT COALESCE(SUM(gpu_hours), 0) FROM finetune_jobs WHERE team_id = ? AND status IN ('queued', 'running')",
                                (t[0],)).fetchone()[0]
        if t[2] + reserved > t[1] + 1e-9:
            out.append(f"team {t[0]} is over its GPU quota ({t[2]} used + {reserved} reserved > {t[1]})")
    marks = ",".join("?" * len(FREE_INSTANCES))
    for r in conn.execute("SELECT e.endpoint_id FROM endpoints e JOIN models m ON m.model_id = e.model_id JOIN teams t ON t.team_id = m.team_id "
                          f"WHERE t.plan = 'free' AND e.instance NOT IN ({marks})", FREE_INSTANCES):
        out.append(f"endpoint {r[0]} of a free team runs on a paid instance")
    for r in conn.execute("SELECT model_id, COUNT(*) FROM endpoints WHERE status = 'running' GROUP BY model_id HAVING COUNT(*) > ?", (MAX_RUNNING_ENDPOINTS,)):
        out.append(f"model {r[0]} has {r[1]} running endpoints")
    for r in conn.execute("SELECT api_key_id FROM api_keys WHERE tokens_used > monthly_token_quota"):
        out.append(f"key {r[0]} used more tokens than its quota")
    for r in conn.execute("SELECT j.finetune_job_id FROM finetune_jobs j JOIN models m ON m.model_id = j.model_id "
                          "WHERE (m.visibility = 'private' OR m.license = 'proprietary') AND m.team_id != j.team_id"):
        out.append(f"job {r[0]} uses another team's private model")
    for r in conn.execute("SELECT j.finetune_job_id FROM finetune_jobs j JOIN datasets d ON d.dataset_id = j.dataset_id "
                          "WHERE d.license = 'proprietary' AND d.team_id != j.team_id"):
        out.append(f"job {r[0]} uses another team's proprietary dataset")
    return out


def _remaining_hours(db: Db, team: dict) -> float:
    reserved = db.value("SELECT COALESCE(SUM(gpu_hours), 0) FROM finetune_jobs WHERE team_id = ? AND status IN ('queued', 'running')", (team["team_id"],))
    return round(team["gpu_quota_hours"] - team["gpu_hours_used"] - reserved, 2)


def _estimate(model: dict, dataset: dict) -> float:
    return max(1.0, round(model["size_b"] * dataset["row_count"] / 2_000_000, 1))


def _usable(team_id: str, row: dict, what: str, ident: str) -> None:
    if row["team_id"] == team_id:
        return
    if row.get("visibility") == "private" or row["license"] == "proprietary":
        raise ToolError(f"{what} {ident} is {'private' if row.get('visibility') == 'private' else 'proprietary'} to team {row['team_id']}; "
                        f"team {team_id} cannot use it.")


@tool(produces=("team_id",), phrase="look up {team_id}")
def get_team(db: Db, team_id: str) -> dict:
    """Get a team's plan and GPU quota, with the GPU hours it has left.

    Args:
        team_id: The team id, e.g. "TM-101".
    """
    team = db.get("teams", team_id, "Team")
    team["gpu_hours_left"] = _remaining_hours(db, team)
    return team


@tool(produces=("model_id", "team_id"), phrase="look up {model_id}")
def get_model(db: Db, model_id: str) -> dict:
    """Get a model's family, size, task, license, visibility, downloads and running endpoints.

    Args:
        model_id: The model id, e.g. "MD-1001".
    """
    model = db.get("models", model_id, "Model")
    model["running_endpoints"] = db.value("SELECT COUNT(*) FROM endpoints WHERE model_id = ? AND status = 'running'", (model_id,))
    return model


@tool(produces=("model_id", "team_id"), phrase="find the public {task} models")
def search_models(db: Db, task: Literal["text-generation", "embedding", "classification", "summarization"]) -> list:
    """List the public models for one task, most downloaded first.

    Args:
        task: The model task.
    """
    return db.all("SELECT model_id, team_id, family, size_b, license, downloads FROM models WHERE task = ? AND visibility = 'public' "
                  "ORDER BY downloads DESC, model_id", (task,))


@tool(produces=("dataset_id", "team_id"), phrase="look up {dataset_id}")
def get_dataset(db: Db, dataset_id: str) -> dict:
    """Get a dataset's name, owner team, row count, license and status.

    Args:
        dataset_id: The dataset id, e.g. "DS-3001".
    """
    return db.get("datasets", dataset_id, "Dataset")


@tool(produces=("model_id", "dataset_id"), phrase="estimate the GPU hours to fine-tune {model_id} on {dataset_id}")
def estimate_finetune(db: Db, model_id: str, dataset_id: str) -> dict:
    """Estimate the GPU hours a fine-tune of a model on a dataset would take.

    Args:
        model_id: The base model id.
        dataset_id: The dataset id.
    """
    model = db.get("models", model_id, "Model")
    dataset = db.get("datasets", dataset_id, "Dataset")
    return {"model_id": model_id, "dataset_id": dataset_id, "estimated_gpu_hours": _estimate(model, dataset)}


@tool(produces=("finetune_job_id", "team_id", "model_id", "dataset_id"), phrase="look up {finetune_job_id}")
def get_job(db: Db, finetune_job_id: str) -> dict:
    """Get a fine-tune job: its team, base model, dataset, GPU hours, status and creation date.

    Args:
        finetune_job_id: The job id, e.g. "FJ-5001".
    """
    return db.get("finetune_jobs", finetune_job_id, "Fine-tune job")


@tool(produces=("finetune_job_id", "model_id"), phrase="list the {status} fine-tune jobs of {team_id}")
def list_team_jobs(db: Db, team_id: str, status: Literal["queued", "running", "succeeded", "failed", "cancelled"] | None = None) -> list:
    """List a team's fine-tune jobs, newest first, optionally only those with one status.

    Args:
        team_id: The team id.
        status: Only jobs with this status.
    """
    db.get("teams", team_id, "Team")
    sql, params = "SELECT * FROM finetune_jobs WHERE team_id = ?", [team_id]
    if status:
        sql, params = sql + " AND status = ?", params + [status]
    return db.all(sql + " ORDER BY created_date DESC, finetune_job_id DESC", params)


@tool(produces=("endpoint_id", "model_id"), phrase="list the inference endpoints of {team_id}")
def list_endpoints(db: Db, team_id: str) -> list:
    """List the inference endpoints serving a team's models.

    Args:
        team_id: The team id.
    """
    db.get("teams", team_id, "Team")
    return db.all("SELECT e.* FROM endpoints e JOIN models m ON m.model_id = e.model_id WHERE m.team_id = ? ORDER BY e.endpoint_id", (team_id,))


@tool(produces=("api_key_id", "team_id"), phrase="look up {api_key_id}")
def get_api_key(db: Db, api_key_id: str) -> dict:
    """Get an API key's team, label, monthly token quota, usage and status.

    Args:
        api_key_id: The API key id, e.g. "AK-9001".
    """
    key = db.get("api_keys", api_key_id, "API key")
    key["tokens_left"] = max(0, key["monthly_token_quota"] - key["tokens_used"])
    return key


@tool(mode=WRITE, produces=("finetune_job_id", "team_id"), phrase="start a fine-tune of {model_id} on {dataset_id} for {team_id}")
def start_finetune(db: Db, team_id: str, model_id: str, dataset_id: str) -> dict:
    """Queue a fine-tune job for a team, if the model and dataset may be used and the GPU quota allows it.

    Args:
        team_id: The team that runs (and pays for) the job.
        model_id: The base model id.
        dataset_id: The dataset id.
    """
    team = db.get("teams", team_id, "Team")
    model = db.get("models", model_id, "Model")
    dataset = db.get("datasets", dataset_id, "Dataset")
    if dataset["status"] != "ready":
        raise ToolError(f"Dataset {dataset_id} is {dataset['status']}; only ready datasets can be used.")
    _usable(team_id, model, "Model", model_id)
    _usable(team_id, dataset, "Dataset", dataset_id)
    hours = _estimate(model, dataset)
    left = _remaining_hours(db, team)
    if hours > left:
        raise ToolError(f"GPU quota exceeded: the job needs {hours:.1f} hours but team {team_id} has {max(left, 0):.1f} left.")
    job_id = db.next_id("finetune_jobs", "FJ-", 5001)
    db.insert("finetune_jobs", {"finetune_job_id": job_id, "team_id": team_id, "model_id": model_id, "dataset_id": dataset_id,
                                "gpu_hours": hours, "status": "queued", "created_date": db.now[:10]})
    return {"finetune_job_id": job_id, "team_id": team_id, "status": "queued", "gpu_hours": hours, "gpu_hours_left": round(left - hours, 2)}


@tool(mode=WRITE, produces=("finetune_job_id", "model_id"), phrase="move {finetune_job_id} to {status}")
def update_job_status(db: Db, finetune_job_id: str, status: Literal["running", "succeeded", "failed", "cancelled"]) -> dict:
    """Move a fine-tune job to its next state.

    Args:
        finetune_job_id: The job id.
        status: The new status.
    """
    job = db.get("finetune_jobs", finetune_job_id, "Fine-tune job")
    allowed = TRANSITIONS.get(job["status"], ())
    if status not in allowed:
        raise ToolError(f"Job {finetune_job_id} is {job['status']}; it can move to {', '.join(allowed) or 'nothing (it is finished)'}, not {status}.")
    db.update("finetune_jobs", finetune_job_id, status=status)
    out = {"finetune_job_id": finetune_job_id, "status": status}
    if status in ("succeeded", "failed"):
        db.execute("UPDATE teams SET gpu_hours_used = ROUND(gpu_hours_used + ?, 2) WHERE team_id = ?", (job["gpu_hours"], job["team_id"]))
        out["gpu_hours_charged"] = job["gpu_hours"]
    if status == "succeeded":
        base = db.get("models", job["model_id"], "Model")
        model_id = db.next_id("models", "MD-", 1001)
        db.insert("models", {**base, "model_id": model_id, "team_id": job["team_id"], "visibility": "private", "downloads": 0})
        out["model_id"] = model_id
    return out


@tool(mode=WRITE, produces=("endpoint_id", "model_id"), phrase="deploy {model_id} on a {instance} instance")
def deploy_model(db: Db, model_id: str, instance: Literal["cpu-small", "gpu-a10", "gpu-a100", "gpu-h100"]) -> dict:
    """Start an inference endpoint (one replica) for a model, billed to the model's team.

    Args:
        model_id: The model id.
        instance: The instance type.
    """
    model = db.get("models", model_id, "Model")
    team = db.get("teams", model["team_id"], "Team")
    if team["plan"] == "free" and instance not in FREE_INSTANCES:
        raise ToolError(f"Team {team['team_id']} is on the free plan; it can only deploy on {', '.join(FREE_INSTANCES)} instances.")
    running = db.value("SELECT COUNT(*) FROM endpoints WHERE model_id = ? AND status = 'running'", (model_id,))
    if running >= MAX_RUNNING_ENDPOINTS:
        raise ToolError(f"Model {model_id} already has {running} running endpoints (at most {MAX_RUNNING_ENDPOINTS}).")
    endpoint_id = db.next_id("endpoints", "EP-", 7001)
    db.insert("endpoints", {"endpoint_id": endpoint_id, "model_id": model_id, "instance": instance, "replicas": 1, "status": "running"})
    return {"endpoint_id": endpoint_id, "model_id": model_id, "instance": instance, "status": "running", "running_endpoints": running + 1}


@tool(mode=WRITE, produces=("endpoint_id",), phrase="stop {endpoint_id}")
def stop_endpoint(db: Db, endpoint_id: str) -> dict:
    """Stop a running inference endpoint.

    Args:
        endpoint_id: The endpoint id.
    """
    ep = db.get("endpoints", endpoint_id, "Endpoint")
    if ep["status"] != "running":
        raise ToolError(f"Endpoint {endpoint_id} is {ep['status']}; only running endpoints can be stopped.")
    db.update("endpoints", endpoint_id, status="stopped")
    return {"endpoint_id": endpoint_id, "status": "stopped"}


@tool(mode=WRITE, produces=("api_key_id",), phrase="revoke {api_key_id}")
def revoke_api_key(db: Db, api_key_id: str) -> dict:
    """Revoke an API key for good.

    Args:
        api_key_id: The API key id.
    """
    key = db.get("api_keys", api_key_id, "API key")
    if key["status"] == "revoked":
        raise ToolError(f"API key {api_key_id} is already revoked.")
    db.update("api_keys", api_key_id, status="revoked")
    return {"api_key_id": api_key_id, "status": "revoked"}


@tool(mode=WRITE, produces=("api_key_id",), phrase="set the monthly token quota of {api_key_id} to {monthly_token_quota}")
def set_token_quota(db: Db, api_key_id: str, monthly_token_quota: Literal[100000, 1000000, 10000000]) -> dict:
    """Change an active API key's monthly token quota.

    Args:
        api_key_id: The API key id.
        monthly_token_quota: The new monthly quota in tokens.
    """
    key = db.get("api_keys", api_key_id, "API key")
    if key["status"] != "active":
        raise ToolError(f"API key {api_key_id} is revoked; it cannot change.")
    if key["monthly_token_quota"] == monthly_token_quota:
        raise ToolError(f"API key {api_key_id} already has a quota of {monthly_token_quota} tokens.")
    if monthly_token_quota < key["tokens_used"]:
        raise ToolError(f"API key {api_key_id} already used {key['tokens_used']} tokens this month; the quota cannot go below that.")
    db.update("api_keys", api_key_id, monthly_token_quota=monthly_token_quota)
    return {"api_key_id": api_key_id, "monthly_token_quota": monthly_token_quota, "tokens_left": monthly_token_quota - key["tokens_used"]}


THEME = Theme(SPEC, [get_team, get_model, search_models, get_dataset, estimate_finetune, get_job, list_team_jobs, list_endpoints,
                     get_api_key, start_finetune, update_job_status, deploy_model, stop_endpoint, revoke_api_key, set_token_quota])
