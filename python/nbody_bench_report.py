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
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # its modules, however it is run
from nbody_bench_plots import write_plots, x_columns  # noqa: E402
from nbody_bench_records import as_records, format_value, label_line  # noqa: E402

PLOT_KINDS = ("line", "stacked_bar", "bar")
REQUIRED_KEYS = {"suite": str, "title": str, "columns": list, "rows": list, "plots": list}
REPORT_HEADING = "# nbody benchmarks\n"


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
    group = spec.get("group")
    if isinstance(group, list) and (spec["kind"] != "line" or not group
                                    or not all(isinstance(g, str) for g in group)):
        return f"'group' must be a column, or for a line a non-empty list of columns, not {group!r}"
    named = [*x_columns(spec), *ys, *(group if isinstance(group, list) else [group] if group else [])]
    named += [spec["labels"]] if spec.get("labels") else []
    named += list((spec.get("filter") or {}).keys())
    for name in named:
        if name not in columns:
            return f"unknown column {name!r} (columns: {', '.join(columns)})"
    return None


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
