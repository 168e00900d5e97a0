"""security: a security operations centre: hosts, vulnerabilities, alerts, incidents and firewall rules."""

from __future__ import annotations

from typing import Literal

from agentworld_gym.theme import Theme
from agentworld_gym.tools import WRITE, Db, ToolError, tool
from agentworld_gym.world import Column, Table, ThemeSpec, choice_col, date_col, faker_col, fk_col, id_col, money_col

SEVERITIES = ("low", "medium", "high", "critical")
RANK = {s: i for i, s in enumerate(SEVERITIES)}
Severity = Literal["low", "medium", "high", "critical"]
ADMIN_PORTS = (22, 3389)
INCIDENT_TITLES = ["Credential stuffing wave", "Ransomware precursor", "Suspicious outbound traffic", "Phishing campaign",
                   "Insider data access", "Web shell on server"]

SPEC = ThemeSpec(
    id="security",
    title="Sentinel SOC",
    category="Cybersecurity & Network Analysis",
    subcategory="Network Monitoring & Threat Intelligence",
    label="security operations",
    description="You help SOC analysts triage alerts, run incidents, patch vulnerabilities and manage firewall rules on monitored hosts.",
    tables=(
        Table("hosts", (
            id_col("host_id", "HO-", 101), faker_col("hostname", "hostname", unique=True), faker_col("ip", "ipv4_private", unique=True),
            choice_col("os", ["ubuntu 22.04", "windows server 2019", "windows 11", "rhel 9", "macos 14"]),
            choice_col("criticality", ["low", "medium", "high"], [0.4, 0.4, 0.2]), choice_col("zone", ["dmz", "internal", "restricted"], [0.25, 0.6, 0.15]),
            choice_col("status", ["online", "isolated", "offline"], [0.85, 0.05, 0.1]),
        ), rows=40),
        Table("vulnerabilities", (
            id_col("vulnerability_id", "VU-", 2001), fk_col("host_id", "hosts"), faker_col("cve", ("bothify", "CVE-202#-#####"), unique=True),
            money_col("cvss", 1, 10), choice_col("status", ["open", "patched", "accepted"], [0.6, 0.3, 0.1]),
            date_col("found_date", "2024-09-01", "2025-05-31"),
        ), rows=120),
        Table("incidents", (
            id_col("incident_id", "IN-", 801), choice_col("title", INCIDENT_TITLES), choice_col("severity", SEVERITIES, [0.2, 0.35, 0.3, 0.15]),
            choice_col("status", ["open", "closed"], [0.55, 0.45]), faker_col("owner", "name"), date_col("opened_date", "2025-03-01", "2025-05-31"),
        ), rows=20),
        Table("alerts", (
            id_col("alert_id", "AL-", 5001), fk_col("host_id", "hosts"),
            choice_col("signature", ["brute force login", "port scan", "malware beacon", "data exfiltration", "privilege escalation", "suspicious dns"]),
            choice_col("severity", SEVERITIES, [0.35, 0.35, 0.2, 0.1]), choice_col("status", ["new", "triaged", "closed"], [0.4, 0.3, 0.3]),
            Column("incident_id", "fk", "incidents", nullable_share=0.7), date_col("raised_date", "2025-04-01", "2025-05-31"),
        ), rows=150),
        Table("firewall_rules", (
            id_col("firewall_rule_id", "FW-", 9001), fk_col("host_id", "hosts"), choice_col("action", ["allow", "deny"], [0.6, 0.4]),
            choice_col("port", [22, 80, 443, 3389, 8080, 5432], type="int"), choice_col("source", ["any", "10.0.0.0/8", "192.168.0.0/16"]),
            choice_col("status", ["active", "disabled"], [0.85, 0.15]),
        ), rows=100),
    ),
    rules=(
        "Severity runs low < medium < high < critical. An alert's severity can only be raised, never lowered.",
        "A critical alert must be linked to an incident: it cannot be escalated to critical or closed without one.",
        "Alerts can be linked only to open incidents, and linking raises the incident's severity to at least the alert's.",
        "Only open incidents can be closed; closing an incident closes its linked alerts.",
        f"Remote-admin ports ({', '.join(map(str, ADMIN_PORTS))}) may never be allowed from 'any' source on DMZ hosts; "
        "a host cannot have two active rules for the same port and source.",
        "Only open vulnerabilities on online hosts can be patched; only online hosts can be isolated.",
    ),
)


def _severity_of(cvss: float) -> str:
    return "critical" if cvss >= 9 else "high" if cvss >= 7 else "medium" if cvss >= 4 else "low"


def _alert(db: Db, alert_id: str) -> dict:
    return db.get("alerts", alert_id, "Alert")


@tool(produces=("host_id",), phrase="look up {host_id}")
def get_host(db: Db, host_id: str) -> dict:
    """Get a host's name, IP, OS, criticality, zone and status, with its open vulnerabilities and unclosed alerts.

    Args:
        host_id: The host id, e.g. "HO-101".
    """
    host = db.get("hosts", host_id, "Host")
    host["open_vulnerabilities"] = db.value("SELECT COUNT(*) FROM vulnerabilities WHERE host_id = ? AND status = 'open'", (host_id,))
    host["highest_open_cvss"] = db.value("SELECT COALESCE(MAX(cvss), 0) FROM vulnerabilities WHERE host_id = ? AND status = 'open'", (host_id,))
    host["unclosed_alerts"] = db.value("SELECT COUNT(*) FROM alerts WHERE host_id = ? AND status != 'closed'", (host_id,))
    return host


@tool(produces=("host_id",), phrase="find the host with the IP address {ip}")
def find_host_by_ip(db: Db, ip: str) -> dict:
    """Find a host by its IP address.

    Args:
        ip: The IPv4 address.
    """
    row = db.one("SELECT * FROM hosts WHERE ip = ? ORDER BY host_id LIMIT 1", (ip.strip(),))
    if row is None:
        raise ToolError(f"No host with IP {ip!r}.")
    return row


@tool(produces=("vulnerability_id", "host_id"), phrase="list the {status} vulnerabilities of {host_id}")
def list_host_vulnerabilities(db: Db, host_id: str, status: Literal["open", "patched", "accepted"] | None = None) -> list:
    """List a host's vulnerabilities, worst first, optionally only those with one status.

    Args:
        host_id: The host id.
        status: Only vulnerabilities with this status.
    """
    db.get("hosts", host_id, "Host")
    sql, params = "SELECT * FROM vulnerabilities WHERE host_id = ?", [host_id]
    if status:
        sql, params = sql + " AND status = ?", params + [status]
    return db.all(sql + " ORDER BY cvss DESC, vulnerability_id", params)


@tool(produces=("vulnerability_id", "host_id"), phrase="look up {vulnerability_id}")
def get_vulnerability(db: Db, vulnerability_id: str) -> dict:
    """Get a vulnerability's CVE, CVSS score, severity (from the score), status and host.

    Args:
        vulnerability_id: The vulnerability id, e.g. "VU-2001".
    """
    vuln = db.get("vulnerabilities", vulnerability_id, "Vulnerability")
    vuln["severity"] = _severity_of(vuln["cvss"])
    return vuln


@tool(produces=("alert_id", "host_id"), phrase="list the {status} alerts of {host_id}")
def list_alerts(db: Db, host_id: str, status: Literal["new", "triaged", "closed"] | None = None) -> list:
    """List a host's alerts, newest first, optionally only those with one status.

    Args:
        host_id: The host id.
        status: Only alerts with this status.
    """
    db.get("hosts", host_id, "Host")
    sql, params = "SELECT * FROM alerts WHERE host_id = ?", [host_id]
    if status:
        sql, params = sql + " AND status = ?", params + [status]
    return db.all(sql + " ORDER BY raised_date DESC, alert_id DESC", params)


@tool(produces=("alert_id", "host_id", "incident_id"), phrase="look up {alert_id}")
def get_alert(db: Db, alert_id: str) -> dict:
    """Get an alert's host, signature, severity, status, linked incident and date.

    Args:
        alert_id: The alert id, e.g. "AL-5001".
    """
    return _alert(db, alert_id)


@tool(produces=("incident_id",), phrase="look up {incident_id}")
def get_incident(db: Db, incident_id: str) -> dict:
    """Get an incident with its number of linked alerts and how many of them are still not closed.

    Args:
        incident_id: The incident id, e.g. "IN-801".
    """
    inc = db.get("incidents", incident_id, "Incident")
    inc["linked_alerts"] = db.value("SELECT COUNT(*) FROM alerts WHERE incident_id = ?", (incident_id,))
    inc["unclosed_alerts"] = db.value("SELECT COUNT(*) FROM alerts WHERE incident_id = ? AND status != 'closed'", (incident_id,))
    return inc


@tool(produces=("firewall_rule_id", "host_id"), phrase="list the firewall rules of {host_id}")
def list_firewall_rules(db: Db, host_id: str) -> list:
    """List a host's firewall rules by port.

    Args:
        host_id: The host id.
    """
    db.get("hosts", host_id, "Host")
    return db.all("SELECT * FROM firewall_rules WHERE host_id = ? ORDER BY port, firewall_rule_id", (host_id,))


@tool(mode=WRITE, produces=("alert_id", "incident_id"), phrase="escalate {alert_id} to {severity}")
def escalate_alert(db: Db, alert_id: str, severity: Literal["medium", "high", "critical"]) -> dict:
    """Raise an alert's severity (critical needs a linked incident, whose severity is raised to match).

    Args:
        alert_id: The alert id.
        severity: The new, higher severity.
    """
    alert = _alert(db, alert_id)
    if alert["status"] == "closed":
        raise ToolError(f"Alert {alert_id} is closed; it cannot be escalated.")
    if RANK[severity] <= RANK[alert["severity"]]:
        raise ToolError(f"Alert {alert_id} is already {alert['severity']}; severity can only be raised, not set to {severity}.")
    if severity == "critical" and not alert["incident_id"]:
        raise ToolError(f"Alert {alert_id} has no incident; link it to an open incident before escalating it to critical.")
    db.update("alerts", alert_id, severity=severity)
    if alert["incident_id"]:
        db.execute("UPDATE incidents SET severity = ? WHERE incident_id = ? AND status = 'open' AND "
                   "(CASE severity WHEN 'low' THEN 0 WHEN 'medium' THEN 1 WHEN 'high' THEN 2 ELSE 3 END) < ?",
                   (severity, alert["incident_id"], RANK[severity]))
    return {"alert_id": alert_id, "severity": severity, "previous_severity": alert["severity"], "incident_id": alert["incident_id"]}


@tool(mode=WRITE, produces=("alert_id", "incident_id"), phrase="link {alert_id} to {incident_id}")
def link_alert(db: Db, alert_id: str, incident_id: str) -> dict:
    """Attach an alert to an open incident (the incident's severity rises to at least the alert's).

    Args:
        alert_id: The alert id.
        incident_id: The incident id.
    """
    alert = _alert(db, alert_id)
    inc = db.get("incidents", incident_id, "Incident")
    if inc["status"] != "open":
        raise ToolError(f"Incident {incident_id} is {inc['status']}; alerts can be linked only to open incidents.")
    if alert["incident_id"] == incident_id:
        raise ToolError(f"Alert {alert_id} is already linked to incident {incident_id}.")
    db.update("alerts", alert_id, incident_id=incident_id, status="triaged" if alert["status"] == "new" else alert["status"])
    severity = max(inc["severity"], alert["severity"], key=RANK.get)
    db.update("incidents", incident_id, severity=severity)
    return {"alert_id": alert_id, "incident_id": incident_id, "incident_severity": severity}


@tool(mode=WRITE, produces=("alert_id",), phrase="close {alert_id}")
def close_alert(db: Db, alert_id: str) -> dict:
    """Close an alert (a critical one only when it is linked to an incident).

    Args:
        alert_id: The alert id.
    """
    alert = _alert(db, alert_id)
    if alert["status"] == "closed":
        raise ToolError(f"Alert {alert_id} is already closed.")
    if alert["severity"] == "critical" and not alert["incident_id"]:
        raise ToolError(f"Alert {alert_id} is critical; link it to an incident before closing it.")
    db.update("alerts", alert_id, status="closed")
    return {"alert_id": alert_id, "status": "closed"}


@tool(mode=WRITE, produces=("incident_id",), phrase='open a {severity} incident titled "{title}"',
      examples={"title": ["Unusual admin logins", "Beaconing from finance subnet", "Exposed database port", "Malicious macro attachment"]})
def open_incident(db: Db, title: str, severity: Severity) -> dict:
    """Open a new incident.

    Args:
        title: A short title.
        severity: The incident's severity.
    """
    if not title.strip():
        raise ToolError("An incident needs a title.")
    incident_id = db.next_id("incidents", "IN-", 801)
    db.insert("incidents", {"incident_id": incident_id, "title": title.strip(), "severity": severity, "status": "open",
                            "owner": "SOC on-call", "opened_date": db.now[:10]})
    return {"incident_id": incident_id, "severity": severity, "status": "open"}


@tool(mode=WRITE, produces=("incident_id",), phrase="close {incident_id}")
def close_incident(db: Db, incident_id: str) -> dict:
    """Close an open incident and every alert linked to it.

    Args:
        incident_id: The incident id.
    """
    inc = db.get("incidents", incident_id, "Incident")
    if inc["status"] != "open":
        raise ToolError(f"Incident {incident_id} is {inc['status']}; only open incidents can be closed.")
    db.update("incidents", incident_id, status="closed")
    closed = db.execute("UPDATE alerts SET status = 'closed' WHERE incident_id = ? AND status != 'closed'", (incident_id,))
    return {"incident_id": incident_id, "status": "closed", "alerts_closed": closed}


@tool(mode=WRITE, produces=("firewall_rule_id", "host_id"), phrase="add a firewall rule to {action} port {port} from {source} on {host_id}")
def add_firewall_rule(db: Db, host_id: str, port: Literal[22, 80, 443, 3389, 8080, 5432], action: Literal["allow", "deny"],
                      source: Literal["any", "10.0.0.0/8", "192.168.0.0/16"]) -> dict:
    """Add an active firewall rule to a host.

    Args:
        host_id: The host id.
        port: The TCP port.
        action: Allow or deny the traffic.
        source: Where the traffic comes from.
    """
    host = db.get("hosts", host_id, "Host")
    if action == "allow" and port in ADMIN_PORTS and source == "any" and host["zone"] == "dmz":
        raise ToolError(f"Host {host_id} is in the DMZ; remote-admin port {port} cannot be opened to any source.")
    clash = db.value("SELECT firewall_rule_id FROM firewall_rules WHERE host_id = ? AND port = ? AND source = ? AND status = 'active' "
                     "ORDER BY firewall_rule_id LIMIT 1", (host_id, port, source))
    if clash:
        raise ToolError(f"Host {host_id} already has an active rule for port {port} from {source} ({clash}); disable it first.")
    rule_id = db.next_id("firewall_rules", "FW-", 9001)
    db.insert("firewall_rules", {"firewall_rule_id": rule_id, "host_id": host_id, "action": action, "port": port, "source": source, "status": "active"})
    return {"firewall_rule_id": rule_id, "host_id": host_id, "action": action, "port": port, "source": source, "status": "active"}


@tool(mode=WRITE, produces=("firewall_rule_id",), phrase="disable {firewall_rule_id}")
def disable_firewall_rule(db: Db, firewall_rule_id: str) -> dict:
    """Disable an active firewall rule.

    Args:
        firewall_rule_id: The firewall rule id, e.g. "FW-9001".
    """
    rule = db.get("firewall_rules", firewall_rule_id, "Firewall rule")
    if rule["status"] != "active":
        raise ToolError(f"Firewall rule {firewall_rule_id} is already disabled.")
    db.update("firewall_rules", firewall_rule_id, status="disabled")
    return {"firewall_rule_id": firewall_rule_id, "status": "disabled"}


@tool(mode=WRITE, produces=("vulnerability_id", "host_id"), phrase="patch {vulnerability_id}")
def patch_vulnerability(db: Db, vulnerability_id: str) -> dict:
    """Apply the patch for an open vulnerability on an online host.

    Args:
        vulnerability_id: The vulnerability id.
    """
    vuln = db.get("vulnerabilities", vulnerability_id, "Vulnerability")
    if vuln["status"] != "open":
        raise ToolError(f"Vulnerability {vulnerability_id} is {vuln['status']}; only open vulnerabilities can be patched.")
    status = db.value("SELECT status FROM hosts WHERE host_id = ?", (vuln["host_id"],))
    if status != "online":
        raise ToolError(f"Host {vuln['host_id']} is {status}; patches can be applied only to online hosts.")
    db.update("vulnerabilities", vulnerability_id, status="patched")
    left = db.value("SELECT COUNT(*) FROM vulnerabilities WHERE host_id = ? AND status = 'open'", (vuln["host_id"],))
    return {"vulnerability_id": vulnerability_id, "host_id": vuln["host_id"], "status": "patched", "open_vulnerabilities_left": left}


@tool(mode=WRITE, produces=("host_id",), phrase="isolate {host_id} from the network")
def isolate_host(db: Db, host_id: str) -> dict:
    """Cut an online host off the network.

    Args:
        host_id: The host id.
    """
    host = db.get("hosts", host_id, "Host")
    if host["status"] != "online":
        raise ToolError(f"Host {host_id} is {host['status']}; only online hosts can be isolated.")
    db.update("hosts", host_id, status="isolated")
    return {"host_id": host_id, "status": "isolated", "previous_status": "online"}


THEME = Theme(SPEC, [get_host, find_host_by_ip, list_host_vulnerabilities, get_vulnerability, list_alerts, get_alert, get_incident,
                     list_firewall_rules, escalate_alert, link_alert, close_alert, open_incident, close_incident, add_firewall_rule,
                     disable_firewall_rule, patch_vulnerability, isolate_host])
