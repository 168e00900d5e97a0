"""cloud: a cloud platform's projects (with quotas), instances, volumes, snapshots and deployments."""

from __future__ import annotations

from typing import Literal

from agentworld_gym.theme import Theme
from agentworld_gym.tools import WRITE, Db, ToolError, tool
from agentworld_gym.world import Column, Table, ThemeSpec, choice_col, date_col, fk_col, id_col, int_col

MACHINE_TYPES = {"std-1": (1, 2), "std-2": (2, 8), "std-4": (4, 16), "std-8": (8, 32), "mem-4": (4, 32)}  # (vCPUs, GB memory)
TYPES = tuple(MACHINE_TYPES)
VERSIONS = ("v1.4.0", "v1.4.1", "v1.5.0", "v1.6.2", "v2.0.0")
MAX_VOLUMES_PER_INSTANCE = 4
MAX_SNAPSHOTS_PER_VOLUME = 5

SPEC = ThemeSpec(
    id="cloud",
    title="Stratus Cloud Console",
    category="System & Cloud Infrastructure",
    subcategory="Cloud Platform Services",
    label="virtual machines, storage and quotas",
    description="You help engineers run their cloud projects: instances, disks, snapshots, deployments and quotas.",
    tables=(
        Table("projects", (
            id_col("project_id", "PRJ-", 101), Column("name", "faker", "slug", unique=True),
            choice_col("region", ["us-east1", "eu-west1", "ap-south1"], [0.5, 0.3, 0.2]),
            int_col("max_instances", 4, 10), int_col("max_vcpus", 8, 40), int_col("max_storage_gb", 500, 3000),
            choice_col("status", ["active", "suspended"], [0.9, 0.1]),
        ), rows=10),
        Table("instances", (
            id_col("instance_id", "VM-", 1001), fk_col("project_id", "projects"), Column("name", "faker", ("hostname", 0), unique=True),
            choice_col("machine_type", TYPES, [0.2, 0.35, 0.25, 0.1, 0.1]),
            choice_col("state", ["running", "stopped", "terminated"], [0.55, 0.3, 0.15]), choice_col("zone", ["a", "b", "c"]),
            date_col("launched", "2024-01-01", "2025-05-31"),
        ), rows=50),
        Table("volumes", (
            id_col("volume_id", "VOL-", 2001), fk_col("instance_id", "instances"),  # the instance it is (or was last) attached to
            choice_col("size_gb", [20, 50, 100, 200, 500], [0.25, 0.3, 0.25, 0.15, 0.05], type="int"),
            choice_col("kind", ["ssd", "hdd"], [0.7, 0.3]), choice_col("status", ["attached", "available"], [0.8, 0.2]),
        ), rows=60),
        Table("snapshots", (
            id_col("snapshot_id", "SNAP-", 3001), fk_col("volume_id", "volumes"), date_col("created", "2025-01-01", "2025-05-31"),
            choice_col("status", ["completed", "pending"], [0.9, 0.1]),
        ), rows=50),
        Table("deployments", (
            id_col("deployment_id", "DEP-", 4001), fk_col("instance_id", "instances"), choice_col("version", VERSIONS),
            choice_col("status", ["succeeded", "failed", "rolled back"], [0.75, 0.15, 0.1]), date_col("date", "2025-01-01", "2025-05-31"),
        ), rows=60),
    ),
    rules=(
        "Instances move running <-> stopped; running or stopped instances can be terminated, and terminated is final.",
        "Quotas per project: instances that are not terminated, vCPUs of running instances, and gigabytes of storage "
        "(volumes of instances that are not terminated) may not exceed the project's limits.",
        "Suspended projects cannot launch or start instances. Only stopped instances can be resized.",
        f"New volumes attach to a running or stopped instance, at most {MAX_VOLUMES_PER_INSTANCE} per instance; "
        f"a volume keeps at most {MAX_SNAPSHOTS_PER_VOLUME} snapshots. Releases deploy only to running instances.",
    ),
)


def _usage(db: Db, project_id: str) -> dict:
    live = db.all("SELECT machine_type, state FROM instances WHERE project_id = ? AND state != 'terminated' ORDER BY instance_id", (project_id,))
    storage = db.value("SELECT COALESCE(SUM(v.size_gb), 0) FROM volumes v JOIN instances i ON i.instance_id = v.instance_id "
                       "WHERE i.project_id = ? AND i.state != 'terminated'", (project_id,))
    vcpus = sum(MACHINE_TYPES[r["machine_type"]][0] for r in live if r["state"] == "running")
    return {"instances_used": len(live), "vcpus_used": vcpus, "storage_gb_used": storage}


def _check_vcpus(db: Db, project: dict, extra: int) -> None:
    used = _usage(db, project["project_id"])["vcpus_used"]
    if used + extra > project["max_vcpus"]:
        raise ToolError(f"vCPU quota exceeded in project {project['project_id']}: {used} running + {extra} requested > {project['max_vcpus']}.")


def _active_project(db: Db, project_id: str) -> dict:
    project = db.get("projects", project_id, "Project")
    if project["status"] != "active":
        raise ToolError(f"Project {project_id} is {project['status']}.")
    return project


def _instance(db: Db, instance_id: str, *states: str) -> dict:
    inst = db.get("instances", instance_id, "Instance")
    if states and inst["state"] not in states:
        raise ToolError(f"Instance {instance_id} is {inst['state']}; this needs it to be {' or '.join(states)}.")
    return inst


@tool(produces=("project_id",), phrase="find the cloud project named {name}")
def find_project_by_name(db: Db, name: str) -> dict:
    """Find a project by its name.

    Args:
        name: The project name.
    """
    row = db.one("SELECT * FROM projects WHERE lower(name) = lower(?)", (name.strip(),))
    if row is None:
        raise ToolError(f"No project named {name!r}.")
    return row


@tool(produces=("project_id",), phrase="show the quota usage of {project_id}")
def get_project(db: Db, project_id: str) -> dict:
    """Get a project's quotas, what it uses now and what is left.

    Args:
        project_id: The project id, e.g. "PRJ-101".
    """
    project = db.get("projects", project_id, "Project")
    use = _usage(db, project_id)
    return {**project, **use, "instances_left": project["max_instances"] - use["instances_used"],
            "vcpus_left": project["max_vcpus"] - use["vcpus_used"], "storage_gb_left": project["max_storage_gb"] - use["storage_gb_used"]}


@tool(produces=("instance_id", "project_id"), phrase="list the {state} instances of {project_id}")
def list_instances(db: Db, project_id: str, state: Literal["running", "stopped", "terminated"] | None = None) -> list:
    """List a project's instances.

    Args:
        project_id: The project id.
        state: Only instances in this state.
    """
    db.get("projects", project_id, "Project")
    sql, params = "SELECT * FROM instances WHERE project_id = ?", [project_id]
    if state:
        sql, params = sql + " AND state = ?", params + [state]
    return db.all(sql + " ORDER BY instance_id", params)


@tool(produces=("instance_id", "project_id"), phrase="look up {instance_id}")
def get_instance(db: Db, instance_id: str) -> dict:
    """Get an instance with its size (vCPUs, memory) and attached volume ids.

    Args:
        instance_id: The instance id, e.g. "VM-1001".
    """
    inst = _instance(db, instance_id)
    vcpus, memory = MACHINE_TYPES[inst["machine_type"]]
    vols = [r["volume_id"] for r in db.all("SELECT volume_id FROM volumes WHERE instance_id = ? AND status = 'attached' ORDER BY volume_id",
                                          (instance_id,))]
    return {**inst, "vcpus": vcpus, "memory_gb": memory, "volume_count": len(vols), "volume_ids": vols}


@tool(produces=("volume_id", "instance_id"), phrase="look up {volume_id}")
def get_volume(db: Db, volume_id: str) -> dict:
    """Get a volume and how many snapshots it has.

    Args:
        volume_id: The volume id, e.g. "VOL-2001".
    """
    vol = db.get("volumes", volume_id, "Volume")
    return {**vol, "snapshot_count": db.value("SELECT COUNT(*) FROM snapshots WHERE volume_id = ?", (volume_id,))}


@tool(produces=("snapshot_id", "volume_id"), phrase="list the snapshots of {volume_id}")
def list_snapshots(db: Db, volume_id: str) -> list:
    """List a volume's snapshots, newest first.

    Args:
        volume_id: The volume id.
    """
    db.get("volumes", volume_id, "Volume")
    return db.all("SELECT * FROM snapshots WHERE volume_id = ? ORDER BY created DESC, snapshot_id DESC", (volume_id,))


@tool(produces=("deployment_id", "instance_id"), phrase="list the {status} deployments on {instance_id}")
def list_deployments(db: Db, instance_id: str, status: Literal["succeeded", "failed", "rolled back"] | None = None) -> list:
    """List the releases deployed to an instance, newest first.

    Args:
        instance_id: The instance id.
        status: Only deployments with this outcome.
    """
    _instance(db, instance_id)
    sql, params = "SELECT * FROM deployments WHERE instance_id = ?", [instance_id]
    if status:
        sql, params = sql + " AND status = ?", params + [status]
    return db.all(sql + " ORDER BY date DESC, deployment_id DESC", params)


@tool(mode=WRITE, produces=("instance_id", "project_id"), phrase="launch a {machine_type} instance called {name} in {project_id}",
      examples={"name": ["checkout-api", "batch-worker", "metrics-db", "render-node", "cache-east"]})
def launch_instance(db: Db, project_id: str, name: str, machine_type: Literal[TYPES]) -> dict:
    """Launch a new running instance in a project, within its quotas.

    Args:
        project_id: The project id.
        name: The instance name, unique on the platform.
        machine_type: The machine type (std-1, std-2, std-4, std-8 or mem-4).
    """
    project = _active_project(db, project_id)
    if not name.strip():
        raise ToolError("The instance name must not be empty.")
    if db.value("SELECT COUNT(*) FROM instances WHERE name = ?", (name.strip(),)):
        raise ToolError(f"An instance named {name!r} already exists.")
    use = _usage(db, project_id)
    if use["instances_used"] >= project["max_instances"]:
        raise ToolError(f"Instance quota of project {project_id} is full ({use['instances_used']}/{project['max_instances']}).")
    _check_vcpus(db, project, MACHINE_TYPES[machine_type][0])
    instance_id = db.next_id("instances", "VM-", 1001)
    db.insert("instances", {"instance_id": instance_id, "project_id": project_id, "name": name.strip(), "machine_type": machine_type,
                            "state": "running", "zone": "a", "launched": db.now[:10]})
    return {"instance_id": instance_id, "project_id": project_id, "state": "running", "vcpus_left": project["max_vcpus"] - use["vcpus_used"] - MACHINE_TYPES[machine_type][0]}


@tool(mode=WRITE, produces=("instance_id",), phrase="start {instance_id}")
def start_instance(db: Db, instance_id: str) -> dict:
    """Start a stopped instance (needs vCPU quota).

    Args:
        instance_id: The instance id.
    """
    inst = _instance(db, instance_id, "stopped")
    project = _active_project(db, inst["project_id"])
    _check_vcpus(db, project, MACHINE_TYPES[inst["machine_type"]][0])
    db.update("instances", instance_id, state="running")
    return {"instance_id": instance_id, "previous_state": "stopped", "state": "running"}


@tool(mode=WRITE, produces=("instance_id",), phrase="stop {instance_id}")
def stop_instance(db: Db, instance_id: str) -> dict:
    """Stop a running instance.

    Args:
        instance_id: The instance id.
    """
    _instance(db, instance_id, "running")
    db.update("instances", instance_id, state="stopped")
    return {"instance_id": instance_id, "previous_state": "running", "state": "stopped"}


@tool(mode=WRITE, produces=("instance_id",), phrase="terminate {instance_id}")
def terminate_instance(db: Db, instance_id: str) -> dict:
    """Terminate an instance for good; its volumes are detached and kept.

    Args:
        instance_id: The instance id.
    """
    inst = _instance(db, instance_id, "running", "stopped")
    detached = db.execute("UPDATE volumes SET status = 'available' WHERE instance_id = ? AND status = 'attached'", (instance_id,))
    db.update("instances", instance_id, state="terminated")
    return {"instance_id": instance_id, "previous_state": inst["state"], "state": "terminated", "volumes_detached": detached}


@tool(mode=WRITE, produces=("instance_id",), phrase="resize {instance_id} to {machine_type}")
def resize_instance(db: Db, instance_id: str, machine_type: Literal[TYPES]) -> dict:
    """Change a stopped instance's machine type.

    Args:
        instance_id: The instance id.
        machine_type: The new machine type.
    """
    inst = _instance(db, instance_id, "stopped")
    if inst["machine_type"] == machine_type:
        raise ToolError(f"Instance {instance_id} is already {machine_type}.")
    db.update("instances", instance_id, machine_type=machine_type)
    vcpus, memory = MACHINE_TYPES[machine_type]
    return {"instance_id": instance_id, "previous_type": inst["machine_type"], "machine_type": machine_type, "vcpus": vcpus, "memory_gb": memory}


@tool(mode=WRITE, produces=("volume_id", "instance_id"), phrase="attach a new {size_gb} GB {kind} volume to {instance_id}")
def create_volume(db: Db, instance_id: str, size_gb: Literal[20, 50, 100, 200, 500], kind: Literal["ssd", "hdd"]) -> dict:
    """Create a volume and attach it to an instance, within the project's storage quota.

    Args:
        instance_id: The instance id.
        size_gb: The size in GB.
        kind: The disk kind.
    """
    inst = _instance(db, instance_id, "running", "stopped")
    project = db.get("projects", inst["project_id"])
    attached = db.value("SELECT COUNT(*) FROM volumes WHERE instance_id = ? AND status = 'attached'", (instance_id,))
    if attached >= MAX_VOLUMES_PER_INSTANCE:
        raise ToolError(f"Instance {instance_id} already has {attached} volumes attached (limit {MAX_VOLUMES_PER_INSTANCE}).")
    used = _usage(db, project["project_id"])["storage_gb_used"]
    if used + size_gb > project["max_storage_gb"]:
        raise ToolError(f"Storage quota exceeded in project {project['project_id']}: {used} GB used + {size_gb} GB > {project['max_storage_gb']} GB.")
    volume_id = db.next_id("volumes", "VOL-", 2001)
    db.insert("volumes", {"volume_id": volume_id, "instance_id": instance_id, "size_gb": size_gb, "kind": kind, "status": "attached"})
    return {"volume_id": volume_id, "instance_id": instance_id, "status": "attached", "storage_gb_left": project["max_storage_gb"] - used - size_gb}


@tool(mode=WRITE, produces=("snapshot_id", "volume_id"), phrase="take a snapshot of {volume_id}")
def snapshot_volume(db: Db, volume_id: str) -> dict:
    """Take a snapshot of a volume.

    Args:
        volume_id: The volume id.
    """
    db.get("volumes", volume_id, "Volume")
    count = db.value("SELECT COUNT(*) FROM snapshots WHERE volume_id = ?", (volume_id,))
    if count >= MAX_SNAPSHOTS_PER_VOLUME:
        raise ToolError(f"Volume {volume_id} already has {count} snapshots (limit {MAX_SNAPSHOTS_PER_VOLUME}); delete one first.")
    snapshot_id = db.next_id("snapshots", "SNAP-", 3001)
    db.insert("snapshots", {"snapshot_id": snapshot_id, "volume_id": volume_id, "created": db.now[:10], "status": "completed"})
    return {"snapshot_id": snapshot_id, "volume_id": volume_id, "status": "completed", "snapshot_count": count + 1}


@tool(mode=WRITE, produces=("deployment_id", "instance_id"), phrase="deploy release {version} to {instance_id}")
def deploy_release(db: Db, instance_id: str, version: Literal[VERSIONS]) -> dict:
    """Deploy an application release to a running instance.

    Args:
        instance_id: The instance id.
        version: The release version.
    """
    _instance(db, instance_id, "running")
    current = db.one("SELECT version FROM deployments WHERE instance_id = ? AND status = 'succeeded' ORDER BY date DESC, deployment_id DESC LIMIT 1",
                     (instance_id,))
    if current and current["version"] == version:
        raise ToolError(f"Release {version} is already live on instance {instance_id}.")
    deployment_id = db.next_id("deployments", "DEP-", 4001)
    db.insert("deployments", {"deployment_id": deployment_id, "instance_id": instance_id, "version": version, "status": "succeeded",
                              "date": db.now[:10]})
    return {"deployment_id": deployment_id, "instance_id": instance_id, "status": "succeeded",
            "previous_version": current["version"] if current else None}


THEME = Theme(SPEC, [find_project_by_name, get_project, list_instances, get_instance, get_volume, list_snapshots, list_deployments,
                     launch_instance, start_instance, stop_instance, terminate_instance, resize_instance, create_volume,
                     snapshot_volume, deploy_release])
