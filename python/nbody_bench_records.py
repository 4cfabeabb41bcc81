"""The rows of one `nbody bench` suite as records, and the labels made from them (the
settings a figure or report section states): shared by nbody_bench_report.py and
nbody_bench_plots.py."""
from __future__ import annotations

import math


def as_records(doc: dict) -> list[dict]:
    """Rows as {column: value} dicts."""
    return [dict(zip(doc["columns"], row)) for row in doc["rows"]]


def select(records: list[dict], spec: dict) -> list[dict]:
    """The rows a plot draws: those matching its filter."""
    wanted = {k: v if isinstance(v, list) else [v] for k, v in (spec.get("filter") or {}).items()}
    return [r for r in records if all(r[k] in vs for k, vs in wanted.items())]


def format_value(value) -> str:
    """Numbers as in the report: floats to 4 significant digits, null as an em dash."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return f"{value:.4g}" if math.isfinite(value) else str(value)
    return str(value)


def distinct(records: list[dict], column: str) -> list:
    """Non-null values of a column in first-seen order (empty when there is no such column)."""
    seen = []
    for r in records:
        v = r.get(column)
        if v is not None and v not in seen:
            seen.append(v)
    return seen


def setting(meta: dict, records: list[dict], key: str) -> str | None:
    """A setting as shown in a label: the column's range or list when the rows vary it,
    otherwise meta[key]."""
    values = distinct(records, key)
    if not values:
        value = meta.get(key)
        return None if value is None else format_value(value)
    if len(values) == 1:
        return format_value(values[0])
    if all(isinstance(v, (int, float)) for v in values):
        return f"{format_value(min(values))}–{format_value(max(values))}"
    return "/".join(format_value(v) for v in values)


def device_parts(meta: dict, records: list[dict]) -> list[str]:
    """CPU model and/or GPU name, for the devices the rows (or meta.device) were measured on."""
    devices = distinct(records, "device") or ([meta["device"]] if meta.get("device") else [])
    parts = []
    if meta.get("cpu") and (not devices or any(d != "gpu" for d in devices)):
        threads = setting(meta, records, "threads")  # the threads suite varies it
        parts.append(f"CPU {meta['cpu']}" + (f" ({threads} threads)" if threads else ""))
    if meta.get("gpu") and (not devices or any(d != "cpu" for d in devices)):
        parts.append(f"GPU {meta['gpu']}")
    return parts


def label_line(meta: dict, records: list[dict]) -> str:
    """Device, N, precision, theta, softening, git revision and date, as one line."""
    parts = device_parts(meta, records)
    for key, fmt in (("n", "N = {}"), ("precision", "{}"), ("theta", "θ = {}"),
                     ("softening", "softening {}")):
        value = setting(meta, records, key)
        if value is not None:
            parts.append(fmt.format(value))
    if meta.get("git"):
        parts.append(f"git {meta['git']}")
    if meta.get("date"):
        parts.append(str(meta["date"]))
    if meta.get("quick"):
        parts.append("--quick")
    return " · ".join(parts)
