"""The HTML report: one self-contained file (inline CSS and SVG, no script, nothing fetched)."""

from __future__ import annotations

import json
from collections import Counter
from html import escape

from ._model import SEVERITIES, Flag, GradeReport, PassHatK, RunResult, Step
from ._redact import ensure_redacted

__all__ = ["render_html"]

#: runs whose step table opens by itself: flagged ones, when not too long to read
OPEN_STEPS_UP_TO = 60
OBSERVATION_PREVIEW = 240
_VERDICT_ORDER = {"corrupt-success": 0, "fail": 1, "pass-with-warnings": 2, "clean-pass": 3}
ARGS_PREVIEW = 160

_CSS = """
:root{--bg:#f6f7f9;--card:#fff;--ink:#1d2330;--muted:#667085;--line:#e4e7ec;--high:#d92d20;--medium:#dc6803;
--low:#2e90fa;--ok:#12b76a;--fail:#912018}
*{box-sizing:border-box}body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;
background:var(--bg);color:var(--ink)}main{max-width:1200px;margin:0 auto;padding:24px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:16px;margin:28px 0 10px}.sub{color:var(--muted);margin:0 0 18px}
.cards{display:flex;gap:12px;flex-wrap:wrap}.card{background:var(--card);border:1px solid var(--line);
border-radius:10px;padding:12px 16px;min-width:150px}.card b{display:block;font-size:24px}.card span{color:var(--muted)}
.card.bad b{color:var(--high)}.card.good b{color:var(--ok)}
table{border-collapse:collapse;width:100%;background:var(--card);border:1px solid var(--line);border-radius:10px;
overflow:hidden}th,td{text-align:left;padding:8px 10px;border-bottom:1px solid var(--line);vertical-align:top}
th{background:#f9fafb;font-weight:600;color:#344054}td.num{text-align:right;font-variant-numeric:tabular-nums}
.badge{display:inline-block;white-space:nowrap;border-radius:999px;padding:1px 9px;font-size:12px;
font-weight:600;color:#fff}
.v-clean-pass{background:var(--ok)}.v-pass-with-warnings{background:var(--medium)}
.v-corrupt-success{background:var(--high)}.v-fail{background:var(--fail)}
.s-reliable{background:var(--ok)}.s-flaky{background:var(--medium)}.s-failing{background:var(--high)}
.s-unknown{background:var(--muted)}
.sev{font-weight:700;text-transform:uppercase;font-size:11px}.sev-high{color:var(--high)}
.sev-medium{color:var(--medium)}.sev-low{color:var(--low)}
details>summary{cursor:pointer;color:#175cd3}tr.steps>td{background:#fcfcfd;padding:0 10px 10px}
table.step-table{margin-top:6px;font-size:13px}table.step-table td{padding:5px 8px}
tr.flagged{background:#fef3f2}tr.flagged.flag-medium{background:#fffaeb}tr.flagged.flag-low{background:#eff8ff}
tr.flagged td:first-child{box-shadow:inset 4px 0 0 var(--high)}
tr.flagged.flag-medium td:first-child{box-shadow:inset 4px 0 0 var(--medium)}
tr.flagged.flag-low td:first-child{box-shadow:inset 4px 0 0 var(--low)}
code{font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,monospace;white-space:pre-wrap;word-break:break-word}
.ok{color:var(--ok);font-weight:600}.failed{color:var(--high);font-weight:600}.unknown{color:var(--muted)}
.flagnote{display:block;margin-top:3px}.notes li{color:#475467}.chart{background:var(--card);
border:1px solid var(--line);border-radius:10px;padding:12px}.muted{color:var(--muted)}
"""


def _badge(kind: str, text: str) -> str:
    return f'<span class="badge {kind}">{escape(text)}</span>'


def _chart(rows: tuple[PassHatK, ...]) -> str:
    """pass^k (and pass@k) as an inline SVG bar chart, k on the x axis, 0..1 on the y axis."""
    width, height, left, bottom, top = 640, 260, 48, 36, 16
    plot_h = height - bottom - top
    slot = (width - left - 16) / max(len(rows), 1)
    bar = min(48.0, slot * 0.36)
    parts = [f'<svg id="pass-k-chart" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" style="max-width:100%;height:auto" role="img" aria-label="pass^k by k">',
             '<title>pass^k and pass@k by k</title>']
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        y = top + plot_h * (1 - tick)
        parts.append(f'<line x1="{left}" x2="{width - 8}" y1="{y:.1f}" y2="{y:.1f}" stroke="#e4e7ec"/>'
                     f'<text x="{left - 8}" y="{y + 4:.1f}" text-anchor="end" font-size="11" fill="#667085">'
                     f'{tick:.2f}</text>')
    for index, row in enumerate(rows):
        x = left + slot * index + slot / 2
        for offset, value, color, label in ((-bar / 2 - 2, row.value, "#175cd3", "pass^"),
                                             (bar / 2 + 2, row.pass_at_k, "#b2ccff", "pass@")):
            bar_h = plot_h * value
            parts.append(f'<rect class="bar" x="{x + offset - bar / 2:.1f}" y="{top + plot_h - bar_h:.1f}" '
                         f'width="{bar:.1f}" height="{bar_h:.1f}" fill="{color}" rx="3">'
                         f'<title>{label}{row.k} = {value:.4f} over {row.tasks_counted} task(s)</title></rect>')
        parts.append(f'<text x="{x - bar / 2 - 2:.1f}" y="{top + plot_h * (1 - row.value) - 5:.1f}" '
                     f'text-anchor="middle" font-size="11" fill="#1d2330">{row.value:.2f}</text>'
                     f'<text x="{x:.1f}" y="{height - 14}" text-anchor="middle" font-size="12" fill="#344054">'
                     f'k={row.k}</text>')
    parts.append(f'<rect x="{width - 170}" y="4" width="10" height="10" fill="#175cd3"/>'
                 f'<text x="{width - 155}" y="13" font-size="11" fill="#344054">pass^k</text>'
                 f'<rect x="{width - 100}" y="4" width="10" height="10" fill="#b2ccff"/>'
                 f'<text x="{width - 85}" y="13" font-size="11" fill="#344054">pass@k</text></svg>')
    return "".join(parts)


def _outcome(step: Step) -> str:
    if step.ok is None:
        return '<span class="unknown">?</span>'
    if step.cascade:
        return '<span class="unknown" title="cancelled because a parallel call failed">cascade</span>'
    return '<span class="ok">ok</span>' if step.ok else '<span class="failed">failed</span>'


def _preview(text: str | None, limit: int) -> str:
    if not text:
        return ""
    short = text if len(text) <= limit else text[:limit] + "…"
    return f"<code>{escape(short)}</code>"


def _steps_table(result: RunResult) -> str:
    by_step: dict[int | None, list[Flag]] = {}
    for flag in result.flags:
        by_step.setdefault(flag.step, []).append(flag)
    rows = ['<table class="step-table"><thead><tr><th>#</th><th>tool</th><th>arguments</th><th>result</th>'
            '<th>observation</th><th>line</th></tr></thead><tbody>']
    for step in result.run.steps:
        flags = by_step.get(step.step, [])
        worst = min((SEVERITIES.index(flag.severity) for flag in flags), default=None)
        css = f' class="flagged flag-{SEVERITIES[worst]}"' if worst is not None else ""
        notes = "".join(f'<span class="flagnote"><span class="sev sev-{flag.severity}">{flag.severity}</span> '
                        f'{escape(flag.rule)}: {escape(flag.detail)}'
                        f'{" — file <code>" + escape(flag.path) + "</code>" if flag.path else ""}</span>'
                        for flag in flags)
        args = json.dumps(dict(step.args), ensure_ascii=False)
        rows.append(f'<tr{css}><td class="num">{step.step}</td><td><b>{escape(step.tool)}</b>{notes}</td>'
                    f'<td>{_preview(args, ARGS_PREVIEW)}</td><td>{_outcome(step)}</td>'
                    f'<td>{_preview(step.observation, OBSERVATION_PREVIEW)}</td>'
                    f'<td class="num">{step.line if step.line is not None else ""}</td></tr>')
    rows.append("</tbody></table>")
    rows.extend(f'<p class="muted">{escape(note)}</p>' for note in result.run.notes)
    return "".join(rows)


def _runs_table(report: GradeReport) -> str:
    rows = ['<table id="runs"><thead><tr><th>run</th><th>task</th><th>verdict</th><th class="num">steps</th>'
            '<th>flags</th><th>source</th></tr></thead>']
    for result in sorted(report.runs, key=lambda item: _VERDICT_ORDER[item.verdict]):  # problems first
        run = result.run
        counts = Counter(flag.severity for flag in result.flags)
        flags = " ".join(f'<span class="sev sev-{severity}">{counts[severity]} {severity}</span>'
                         for severity in SEVERITIES if counts[severity]) or '<span class="muted">none</span>'
        extra = []
        if run.parent:
            extra.append(f"sub-agent of {escape(run.parent)}")
        if run.partial:
            extra.append("partial (audit)")
        if run.delivered_forced:
            extra.append("delivered forced")
        judge = ""
        if result.judge is not None:
            outcome = result.judge.error or ("passed" if result.judge.passed else "failed")
            judge = f'<br><span class="muted">judge: {escape(outcome)}</span>'
        open_attr = " open" if result.flags and len(run.steps) <= OPEN_STEPS_UP_TO else ""
        rows.append(
            f'<tbody class="run"><tr class="run-row"><td><b>{escape(run.run_id)}</b>'
            f'{"<br><span class=muted>" + ", ".join(extra) + "</span>" if extra else ""}{judge}</td>'
            f'<td>{escape(run.task)}</td><td>{_badge("v-" + result.verdict, result.verdict)}</td>'
            f'<td class="num">{run.step_count}</td><td>{flags}</td><td><code>{escape(run.source)}</code></td></tr>'
            f'<tr class="steps"><td colspan="6"><details{open_attr}><summary>{len(run.steps)} step(s)'
            f'{", " + str(len(result.flags)) + " flag(s)" if result.flags else ""}</summary>'
            f"{_steps_table(result)}</details></td></tr></tbody>")
    rows.append("</table>")
    return "".join(rows)


def _tasks_table(report: GradeReport) -> str:
    if not report.tasks:
        return '<p class="muted">No task has a delivery signal (audit-only input): pass^k is not computed.</p>'
    rows = ['<table id="tasks"><thead><tr><th>task</th><th>status</th><th class="num">n</th><th class="num">c</th>'
            "<th>pass^k (k = 1..n)</th></tr></thead><tbody>"]
    for task in report.tasks:
        values = " · ".join(f"{value:.4f}" for value in task.pass_hat_k)
        rows.append(f"<tr><td>{escape(task.task)}</td><td>{_badge('s-' + task.status, task.status)}</td>"
                    f'<td class="num">{task.n}</td><td class="num">{task.c}</td><td>{values}</td></tr>')
    rows.append("</tbody></table>")
    return "".join(rows)


def render_html(report: GradeReport, *, title: str = "verigate trace report") -> str:
    """The report as one HTML document a person can open anywhere (no network, no script)."""
    report = ensure_redacted(report)
    verdicts = Counter(result.verdict for result in report.runs)
    exit_card = "bad" if report.exit_code else "good"
    cards = [
        (f"{len(report.runs)}", "runs", ""),
        (f"{verdicts['clean-pass']}", "clean-pass", "good" if verdicts["clean-pass"] else ""),
        (f"{verdicts['pass-with-warnings']}", "pass-with-warnings", ""),
        (f"{verdicts['corrupt-success']}", "corrupt-success", "bad" if verdicts["corrupt-success"] else ""),
        (f"{len(report.flaky_tasks)} / {len(report.failing_tasks)}", "flaky / failing tasks",
         "bad" if report.flaky_tasks or report.failing_tasks else ""),
        (f"{report.exit_code}", "exit code", exit_card),
    ]
    card_html = "".join(f'<div class="card {css}"><b>{escape(value)}</b><span>{escape(label)}</span></div>'
                        for value, label, css in cards)
    chart = (f'<div class="chart">{_chart(report.pass_hat_k)}</div>' if report.pass_hat_k
             else '<p class="muted">No pass^k: no run has a delivery signal.</p>')
    notes = "".join(f"<li>{escape(note)}</li>" for note in report.notes)
    verified = "verified" if report.config_verified else "NOT verified (thresholds are assumptions)"
    defaults = (f" · defaults used: {escape(', '.join(report.config_defaults))}" if report.config_defaults
                else "")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{escape(title)}</title><style>{_CSS}</style></head>
<body><main>
<h1>{escape(title)}</h1>
<p class="sub">config <code>{escape(report.config_source)}</code> · {verified}{defaults} ·
judge axis: {escape(report.judge.reason)}</p>
<div class="cards">{card_html}</div>
<h2>pass^k</h2>
{chart}
<h2>Tasks</h2>
{_tasks_table(report)}
<h2>Runs</h2>
{_runs_table(report)}
{f'<h2>Notes</h2><ul class="notes">{notes}</ul>' if notes else ""}
</main></body></html>
"""
