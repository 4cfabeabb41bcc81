#!/usr/bin/env python3
"""Plots and Markdown report for one `nbody bench` suite.

`nbody bench SUITE -o DIR` writes DIR/SUITE.json and DIR/SUITE.csv, then runs

    python3 python/nbody_bench_report.py DIR SUITE

which draws every plot the JSON names (DIR/<file>, PNG, 150 dpi) and writes the suite's
section of DIR/report.md. Standard library and matplotlib only (Python 3.9+).

Input, DIR/SUITE.json:
    suite    the suite name (must equal SUITE)
    title    one line, the section heading
    meta     optional: cpu, threads, gpu, device (cpu|gpu|all), git, date, quick, precision,
             theta, softening, n; absent or null keys are left out of the labels
    columns  column names; rows: lists of string, number or null, one value per column
    plots    list of {file, kind, x, y, group?, logx?, logy?, xlabel?, ylabel?, title?,
             filter?, share?, labels?}; kind is
               line         one line per distinct `group` value, or per y column when y is a
                            list; with a list and a group, one line per (group, y column);
                            x a list: one panel per x column, side by side (xlabel a list
                            too); labels: a column written beside each point
               stacked_bar  one bar per distinct x, stacked by group; share: true also
                            writes each stage's percentage of its bar
               bar          grouped bars: x categories, one bar per group
             filter {column: value or [values]} keeps matching rows; rows whose x or y is
             null are left out of plots
    notes    optional list of sentences

Output: every figure and the report section carry one label line naming the device (CPU
model and/or GPU name), N, precision, theta, softening, git revision and date. A value that
varies within the plotted rows (a column of that name) is shown as its range or list.
The section, delimited by <!-- suite: NAME --> ... <!-- end suite: NAME -->, replaces an
earlier section of the same suite in place, so report.md keeps one section per suite in
first-run order. Without matplotlib the section (table, notes) is still written, a line on
stderr says the plots were skipped, and the exit code is 0.

Exit codes: 0 done; 1 bad input (the message names the file and the problem) or a plot failed.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
import textwrap
from pathlib import Path

PLOT_KINDS = ("line", "stacked_bar", "bar")
REQUIRED_KEYS = {"suite": str, "title": str, "columns": list, "rows": list, "plots": list}
REPORT_HEADING = "# nbody benchmarks\n"
MISSING_MATPLOTLIB = ("plots skipped: matplotlib is not installed "
                      "(pip install matplotlib, or apt install python3-matplotlib)")
DPI = 150
FIGSIZE = (8.0, 5.0)
LINE_STYLES = ("-", "--", ":", "-.")
MARKERS = ("o", "s", "^", "D", "v", "P")


class BadInput(Exception):
    """Input that cannot be reported; the message names the file and the problem."""


# ---------------------------------------------------------------- input

def load_suite(path: Path, suite: str) -> dict:
    """Reads and validates DIR/SUITE.json."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise BadInput(f"{path}: cannot read: {e.strerror}") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise BadInput(f"{path}:{e.lineno}: invalid JSON: {e.msg}") from None
    problem = find_problem(doc, suite)
    if problem:
        raise BadInput(f"{path}: {problem}")
    return doc


def find_problem(doc, suite: str) -> str | None:
    """The first thing wrong with a parsed suite document, or None."""
    if not isinstance(doc, dict):
        return "the top level must be a JSON object"
    for key, kind in REQUIRED_KEYS.items():
        if key not in doc:
            return f"missing key '{key}'"
        if not isinstance(doc[key], kind):
            return f"'{key}' must be a {kind.__name__}"
    if doc["suite"] != suite:
        return f"'suite' is '{doc['suite']}', expected '{suite}'"
    if not isinstance(doc.get("meta") or {}, dict):
        return "'meta' must be an object"
    if not all(isinstance(n, str) for n in doc.get("notes") or []):
        return "'notes' must be a list of strings"
    columns = doc["columns"]
    if not all(isinstance(c, str) for c in columns):
        return "'columns' must be a list of strings"
    for i, row in enumerate(doc["rows"]):
        if not isinstance(row, list) or len(row) != len(columns):
            return f"rows[{i}] must be a list of {len(columns)} values (one per column)"
        if not all(v is None or isinstance(v, (str, int, float)) for v in row):
            return f"rows[{i}]: values must be strings, numbers or null"
    for i, spec in enumerate(doc["plots"]):
        problem = plot_problem(spec, columns)
        if problem:
            return f"plots[{i}]: {problem}"
    return None


def plot_problem(spec, columns: list) -> str | None:
    """The first thing wrong with one plot spec, or None."""
    if not isinstance(spec, dict):
        return "must be an object"
    for key in ("file", "kind", "x", "y"):
        if key not in spec:
            return f"missing key '{key}'"
    file = spec["file"]
    if not isinstance(file, str) or Path(file).name != file or not file.endswith(".png"):
        return f"'file' must be a plain file name ending in .png, not {file!r}"
    if spec["kind"] not in PLOT_KINDS:
        return f"unknown plot kind {spec['kind']!r} (known: {', '.join(PLOT_KINDS)})"
    ys = spec["y"] if isinstance(spec["y"], list) else [spec["y"]]
    if spec["kind"] != "line" and (len(ys) != 1 or isinstance(spec["x"], list)):
        return f"kind '{spec['kind']}' takes one x and one y column"
    named = [*x_columns(spec), *ys, *([spec["group"]] if spec.get("group") else [])]
    named += [spec["labels"]] if spec.get("labels") else []
    named += list((spec.get("filter") or {}).keys())
    for name in named:
        if name not in columns:
            return f"unknown column {name!r} (columns: {', '.join(columns)})"
    return None


def as_records(doc: dict) -> list[dict]:
    """Rows as {column: value} dicts."""
    return [dict(zip(doc["columns"], row)) for row in doc["rows"]]


def select(records: list[dict], spec: dict) -> list[dict]:
    """The rows a plot draws: those matching its filter."""
    wanted = {k: v if isinstance(v, list) else [v] for k, v in (spec.get("filter") or {}).items()}
    return [r for r in records if all(r[k] in vs for k, vs in wanted.items())]


# ---------------------------------------------------------------- labels and tables

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


def markdown_table(columns: list, rows: list) -> str:
    """Every row (the CSV beside the report holds them too); numeric columns right-aligned."""
    def cell(v):
        return format_value(v).replace("|", "\\|")

    def numeric(i):
        values = [row[i] for row in rows if row[i] is not None]
        return bool(values) and all(isinstance(v, (int, float)) for v in values)

    lines = ["| " + " | ".join(cell(c) for c in columns) + " |",
             "|" + "|".join("---:" if numeric(i) else "---" for i in range(len(columns))) + "|"]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


# ---------------------------------------------------------------- report.md

def section_text(doc: dict, images: list[dict], plots_note: str | None, csv_exists: bool) -> str:
    """The suite's report section, markers included."""
    suite, meta = doc["suite"], doc.get("meta") or {}
    out = [f"<!-- suite: {suite} -->", f"## {doc['title']} ({suite})", "",
           f"*{label_line(meta, as_records(doc))}*", "", markdown_table(doc["columns"], doc["rows"]),
           ""]
    if csv_exists:
        out += [f"Data: [{suite}.csv]({suite}.csv), [{suite}.json]({suite}.json)", ""]
    notes = doc.get("notes") or []
    if notes:
        out += [f"- {note}" for note in notes] + [""]
    for spec in images:
        out += [f"![{spec.get('title') or doc['title']}]({spec['file']})", ""]
    if plots_note:
        out += [f"*{plots_note}*", ""]
    out.append(f"<!-- end suite: {suite} -->")
    return "\n".join(out) + "\n"


def merge_section(report: str, suite: str, section: str) -> str:
    """report with the suite's section replaced in place, or appended when new."""
    start_marker, end_marker = f"<!-- suite: {suite} -->", f"<!-- end suite: {suite} -->"
    start = report.find(start_marker + "\n")
    if start < 0:
        return report.rstrip("\n") + "\n\n" + section
    end = report.find(end_marker, start)
    if end >= 0:
        end = end + len(end_marker)
        if report.startswith("\n", end):
            end += 1
    else:  # a damaged section: it runs to the next suite's section or the end
        end = report.find("<!-- suite: ", start + len(start_marker))
        end = len(report) if end < 0 else end
    return report[:start] + section + report[end:]


def write_atomically(path: Path, data: bytes) -> None:
    """Writes a temporary file and renames it into place: an interrupted write loses nothing."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def update_report(out_dir: Path, suite: str, section: str) -> Path:
    path = out_dir / "report.md"
    report = path.read_text(encoding="utf-8") if path.exists() else REPORT_HEADING
    write_atomically(path, merge_section(report, suite, section).encode("utf-8"))
    return path


# ---------------------------------------------------------------- plots

def load_pyplot():
    """matplotlib.pyplot with the Agg backend (no display), or None with the reason."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None, MISSING_MATPLOTLIB
    except Exception as e:  # a broken installation: report it, still write the tables
        return None, f"plots skipped: matplotlib could not be loaded ({e})"
    return plt, None


def x_columns(spec: dict) -> list[str]:
    return spec["x"] if isinstance(spec["x"], list) else [spec["x"]]


def y_columns(spec: dict) -> list[str]:
    return spec["y"] if isinstance(spec["y"], list) else [spec["y"]]


def draw_line(ax, spec: dict, records: list[dict]) -> None:
    """One line with markers per group (or per y column, or per (group, y column))."""
    x = spec["x"]
    xs_all = distinct(records, x)
    numeric_x = all(isinstance(v, (int, float)) for v in xs_all)
    position = (lambda v: v) if numeric_x else {v: i for i, v in enumerate(xs_all)}.get
    groups = distinct(records, spec["group"]) if spec.get("group") else [None]
    ys = y_columns(spec)
    for gi, group in enumerate(groups):
        color = f"C{gi % 10}" if len(ys) > 1 and group is not None else None
        for yi, y in enumerate(ys):
            points = sorted((position(r[x]), r[y], format_value(r.get(spec.get("labels"))))
                            for r in records if r[x] is not None and r[y] is not None
                            and (group is None or r[spec["group"]] == group))
            if not points:
                continue
            label = " ".join(str(p) for p in (group, y if len(ys) > 1 else None) if p is not None)
            ax.plot([p[0] for p in points], [p[1] for p in points], label=label or y,
                    color=color, linestyle=LINE_STYLES[yi % len(LINE_STYLES)],
                    marker=MARKERS[(yi if color else gi) % len(MARKERS)], markersize=4)
            for px, py, text in points if spec.get("labels") else []:
                ax.annotate(text, (px, py), textcoords="offset points", xytext=(4, 4), fontsize=6,
                            color=ax.lines[-1].get_color())
    if not numeric_x:
        set_category_ticks(ax, xs_all)
    elif all(isinstance(v, int) for v in xs_all) and not spec.get("logx"):
        from matplotlib.ticker import MaxNLocator  # thread counts, iterations: no 1.5 ticks
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))


def draw_bars(ax, spec: dict, records: list[dict], stacked: bool) -> None:
    """Grouped bars, or bars stacked by group (with percentages when spec['share'])."""
    x, y, group_col = spec["x"], spec["y"], spec.get("group")
    xs = distinct(records, x)
    groups = distinct(records, group_col) if group_col else [None]
    height = {}
    for r in records:
        if r[x] is not None and r[y] is not None:
            key = (r[x], r[group_col] if group_col else None)
            height[key] = height.get(key, 0.0) + r[y]
    totals = [sum(height.get((c, g), 0.0) for g in groups) for c in xs]
    bottom = [0.0] * len(xs)
    width = 0.8 if stacked else 0.8 / len(groups)
    for gi, group in enumerate(groups):
        values = [height.get((c, group), 0.0) for c in xs]
        offsets = [i if stacked else i - 0.4 + width * (gi + 0.5) for i in range(len(xs))]
        ax.bar(offsets, values, width, bottom=bottom if stacked else None,
               label=None if group is None else str(group))
        if stacked and spec.get("share"):
            annotate_shares(ax, offsets, bottom, values, totals)
        if stacked:
            bottom = [b + v for b, v in zip(bottom, values)]
    set_category_ticks(ax, xs)


def annotate_shares(ax, offsets, bottom, values, totals) -> None:
    """Writes each segment's share of its bar inside it, where it is tall enough to hold it."""
    tallest = max(totals, default=0.0) or 1.0
    for x, b, v, total in zip(offsets, bottom, values, totals):
        if total > 0 and v / tallest >= 0.04:
            ax.text(x, b + v / 2, f"{100 * v / total:.0f}%", ha="center", va="center",
                    fontsize=7, color="white")


def set_category_ticks(ax, values: list) -> None:
    labels = [format_value(v) for v in values]
    rotate = len(values) > 6 or any(len(s) > 10 for s in labels)
    ax.set_xticks(range(len(values)))
    ax.set_xticklabels(labels, rotation=30 if rotate else 0, ha="right" if rotate else "center")


def draw_plot(plt, doc: dict, spec: dict, out_dir: Path) -> Path:
    """Draws one plot spec into out_dir/spec['file']."""
    records = select(as_records(doc), spec)
    label = label_line(doc.get("meta") or {}, records)
    xs = x_columns(spec)
    xlabels = spec.get("xlabel") if isinstance(spec.get("xlabel"), list) else [spec.get("xlabel")]
    fig, axes = plt.subplots(1, len(xs), squeeze=False, sharey=True,
                             figsize=(FIGSIZE[0] * (1 + 0.6 * (len(xs) - 1)), FIGSIZE[1]))
    try:
        for i, (ax, x) in enumerate(zip(axes[0], xs)):  # one panel per x column
            panel = dict(spec, x=x, xlabel=xlabels[i] if i < len(xlabels) else None)
            if len(xs) > 1:
                panel["title"] = None
            if spec["kind"] == "line":
                draw_line(ax, panel, records)
            else:
                draw_bars(ax, spec, records, stacked=spec["kind"] == "stacked_bar")
            if not ax.has_data():
                ax.text(0.5, 0.5, "no data", transform=ax.transAxes, ha="center", va="center")
                print(f"{spec['file']}: no rows to plot", file=sys.stderr)
            decorate(ax, panel, doc, title=len(xs) == 1)
            if i > 0:
                ax.set_ylabel("")  # shared with the first panel
        if len(xs) > 1:
            fig.suptitle(spec.get("title") or doc["title"])
        wrapped = textwrap.fill(label, width=120)
        fig.text(0.5, 0.01, wrapped, ha="center", va="bottom", fontsize=7, color="0.3")
        fig.tight_layout(rect=(0, 0.03 + 0.025 * wrapped.count("\n"), 1, 1))
        path = out_dir / spec["file"]
        tmp = path.with_name(f".{path.name}.tmp")
        fig.savefig(tmp, dpi=DPI, format="png")
        os.replace(tmp, path)
        return path
    finally:
        plt.close(fig)


def decorate(ax, spec: dict, doc: dict, title: bool = True) -> None:
    """Axis scales, labels, title (unless a panel of several), legend and grid."""
    if spec.get("logx") and spec["kind"] == "line":
        ax.set_xscale("log")
    if spec.get("logy"):
        ax.set_yscale("log")
    ax.set_xlabel(spec.get("xlabel") or spec["x"])
    ax.set_ylabel(spec.get("ylabel") or ", ".join(y_columns(spec)))
    if title:
        ax.set_title(spec.get("title") or doc["title"])
    axis = "both" if spec["kind"] == "line" else "y"  # no grid lines through the bars
    ax.set_axisbelow(True)
    ax.grid(True, which="major", axis=axis, alpha=0.4)
    if spec.get("logx") or spec.get("logy"):
        ax.grid(True, which="minor", axis=axis, alpha=0.15)
    handles, _ = ax.get_legend_handles_labels()
    if len(handles) > 8:
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    elif handles:
        ax.legend(fontsize=8)


def write_plots(doc: dict, out_dir: Path) -> tuple[list[dict], str | None, bool]:
    """Draws every plot; returns the specs drawn, a note when plots were skipped, and whether
    every plot succeeded."""
    if not doc["plots"]:
        return [], None, True
    plt, reason = load_pyplot()
    if plt is None:
        print(reason, file=sys.stderr)
        return [], reason, True
    drawn, ok = [], True
    for spec in doc["plots"]:
        try:
            draw_plot(plt, doc, spec, out_dir)
            drawn.append(spec)
        except Exception as e:  # one bad plot must not cost the report
            print(f"{out_dir / spec['file']}: plot failed: {e}", file=sys.stderr)
            ok = False
    return drawn, None, ok


# ---------------------------------------------------------------- command line

def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="nbody_bench_report.py",
        description="Draws the plots of DIR/SUITE.json and writes its section of DIR/report.md "
                    "(run by `nbody bench SUITE -o DIR`).",
        epilog=__doc__[__doc__.index("Input,"):], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dir", type=Path, help="the folder holding SUITE.json (and SUITE.csv)")
    parser.add_argument("suite", help="the suite name, e.g. scaling")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        doc = load_suite(args.dir / f"{args.suite}.json", args.suite)
    except BadInput as e:
        print(f"nbody_bench_report: {e}", file=sys.stderr)
        return 1
    images, plots_note, ok = write_plots(doc, args.dir)
    csv_exists = (args.dir / f"{args.suite}.csv").exists()
    report = update_report(args.dir, args.suite, section_text(doc, images, plots_note, csv_exists))
    print(f"{report}: section '{args.suite}'" + (f", {len(images)} plots" if images else ""))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
