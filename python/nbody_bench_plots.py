"""The figures of one `nbody bench` suite (matplotlib, Agg backend): line plots, stacked and
grouped bars, each with the suite's label line (nbody_bench_report.py draws them through
write_plots and says so in its section when matplotlib is missing)."""
from __future__ import annotations

import os
import sys
import textwrap
from pathlib import Path

from nbody_bench_records import as_records, distinct, format_value, label_line, select

MISSING_MATPLOTLIB = ("plots skipped: matplotlib is not installed "
                      "(pip install matplotlib, or apt install python3-matplotlib)")
DPI = 150
FIGSIZE = (8.0, 5.0)
LINE_STYLES = ("-", "--", ":", "-.")
MARKERS = ("o", "s", "^", "D", "v", "P")


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


def group_columns(spec: dict) -> list[str]:
    """The columns whose values together name a line (`group`: one column or a list)."""
    group = spec.get("group")
    return [] if not group else group if isinstance(group, list) else [group]


def group_of(record: dict, spec: dict) -> str | None:
    """A record's line: its group columns' values, the null ones left out ("adaptive
    dynamical", "fixed"); None without a group."""
    columns = group_columns(spec)
    if not columns:
        return None
    return " ".join(str(record.get(c)) for c in columns if record.get(c) is not None)


def draw_line(ax, spec: dict, records: list[dict]) -> None:
    """One line with markers per group (or per y column, or per (group, y column))."""
    x = spec["x"]
    xs_all = distinct(records, x)
    numeric_x = all(isinstance(v, (int, float)) for v in xs_all)
    position = (lambda v: v) if numeric_x else {v: i for i, v in enumerate(xs_all)}.get
    groups = []
    for r in records:
        g = group_of(r, spec)
        if g not in groups:
            groups.append(g)
    ys = y_columns(spec)
    # A log axis has no place for 0 or less (a reference run's error of 0): such points are left out.
    def on_axes(r, y):
        return (r[x] is not None and r[y] is not None
                and not (spec.get("logx") and numeric_x and r[x] <= 0)
                and not (spec.get("logy") and r[y] <= 0))
    for gi, group in enumerate(groups):
        color = f"C{gi % 10}" if len(ys) > 1 and group is not None else None
        for yi, y in enumerate(ys):
            points = sorted((position(r[x]), r[y], format_value(r.get(spec.get("labels"))))
                            for r in records if on_axes(r, y) and group_of(r, spec) == group)
            if not points:
                continue
            label = " ".join(str(p) for p in (group, y if len(ys) > 1 else None) if p)
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
        quiet_minor_labels(ax.xaxis)
    if spec.get("logy"):
        ax.set_yscale("log")
        quiet_minor_labels(ax.yaxis)
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


def quiet_minor_labels(axis) -> None:
    """Readable ticks on a log axis: no labels on its minor ticks (matplotlib labels 2, 3, 4 x
    10^k on axes of one or two decades, and they ran into each other); below three decades,
    major ticks at 1, 2 and 5 x 10^k written as plain numbers instead, so that a short axis
    keeps a few labels."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter
    low, high = sorted(axis.get_view_interval())
    if not low > 0:
        return
    axis.set_minor_formatter(NullFormatter())
    if high / low < 1000:
        axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))


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
