"""The reports of ``verigate judge eval`` and ``calibrate``: text, JSON and one self-contained HTML page.

The figures come from ``verigate.judge._agreement`` (one place for both commands); this module only lays them
out. Every text from a case or the store is escaped in HTML (and shown with control characters escaped in text);
request and final text are those the gate's egress redacted (eval) or the store keeps redacted (calibrate)."""

from __future__ import annotations

import json
from html import escape

from ..judge._agreement import Agreement, JudgeQuality, Thresholds, failed_thresholds, quality_json

__all__ = ["render", "render_html", "render_json", "render_text"]

#: disagreements and inconsistent cases listed in the text report (all are in JSON and HTML)
TEXT_LIST_LIMIT = 20
_PREVIEW_CHARS = 2000


def _num(value: float | None, digits: int = 4) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def _seconds(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f} s"


def _printable(text: str) -> str:
    """Control and format characters escaped: agent text must not drive the terminal."""
    import unicodedata

    return "".join(c.encode("unicode_escape").decode("ascii") if unicodedata.category(c) in ("Cc", "Cf") else c
                   for c in text)


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def _ratio_text(value: float | None, numerator: int, denominator: int) -> str:
    return f"{_num(value)} ({numerator}/{denominator})"


def _figures(report: JudgeQuality, figures: Agreement) -> list[tuple[str, str]]:
    """(name, value) of every figure, each value with its numerator and denominator."""
    interval, correct = figures.kappa_ci, figures.tp + figures.tn
    ci = f"95% CI {interval[0]:.4f}..{interval[1]:.4f}" if interval is not None else "95% CI n/a"
    # a reason code comes from an engine or a stored row: shown escaped, like every other text from outside
    errors = "".join(f"; {_printable(reason)} {count}" for reason, count in report.errors_by_reason.items())
    rows = [
        ("TPR (complete judged complete)", _ratio_text(figures.tpr, figures.tp, figures.tp + figures.fn)),
        ("TNR (incomplete judged incomplete)", _ratio_text(figures.tnr, figures.tn, figures.tn + figures.fp)),
        ("accuracy", _ratio_text(figures.accuracy, correct, figures.verdicts)),
        ("Cohen's kappa", f"{_num(figures.kappa)} ({ci}; Cohen 1960 large-sample SE)"),
        ("verification errors", _ratio_text(figures.error_rate, figures.errors, figures.judgments) + errors),
    ]
    if report.kind == "eval":
        cases = report.cases
        consistent = sum(case.consistent for case in cases)
        rows.append(("consistency across repeats", _num(report.consistency)
                     + (f" ({consistent}/{len(cases)} cases)" if report.repeat > 1 else " (one run: --repeat N)")))
        latency = report.latency()
        rows.append(("latency", f"p50 {_seconds(latency['p50'])}, p90 {_seconds(latency['p90'])}, "
                                f"p99 {_seconds(latency['p99'])}"))
        rows.append(("usage", _usage_text(report)))
    return rows


def _usage_text(report: JudgeQuality) -> str:
    usage = report.usage()
    if not usage["reported_calls"]:
        return "not reported (the model client reports no usage)"
    tokens = (f"input {usage['input_tokens'] if usage['input_tokens'] is not None else 'not reported'} tokens, "
              f"output {usage['output_tokens'] if usage['output_tokens'] is not None else 'not reported'} tokens")
    cost = "not reported" if usage["cost_usd"] is None else f"${usage['cost_usd']:.6f}"
    return f"{tokens}, cost {cost} (reported by {usage['reported_calls']} of {usage['calls']} calls)"


def render_text(report: JudgeQuality, thresholds: Thresholds | None = None) -> str:
    figures = report.agreement
    cases = report.cases
    if report.kind == "eval":
        head = (f"verigate judge eval: {_count(len(cases), 'case')} x {_count(report.repeat, 'repeat')} = "
                f"{_count(figures.judgments, 'judgment')} ({_count(figures.verdicts, 'verdict')}, "
                f"{_count(figures.errors, 'verification error')})")
    else:
        excluded = ", ".join(f"{count} {status}" for status, count in report.excluded.items())
        head = (f"verigate judge calibrate: {_count(figures.judgments, 'resolved review')} ({figures.verdicts} with "
                f"a verdict, {figures.errors} without one or with a verification error); left out: "
                f"{excluded or 'none'}")
    lines = [head]
    if report.caveat:
        lines.append(f"caveat: {report.caveat}")
    lines += [
        "",
        "label \\ judged    complete   incomplete",
        f"complete          TP {figures.tp:<7} FN {figures.fn}",
        f"incomplete        FP {figures.fp:<7} TN {figures.tn}",
        "",
        *(f"{name:<35}{value}" for name, value in _figures(report, figures)),
    ]
    inconsistent = [case for case in cases if not case.consistent] if report.repeat > 1 else []
    if inconsistent:
        lines += ["", f"inconsistent cases ({len(inconsistent)}):"]
        lines += [f"  {_printable(case.case)}: label {case.label}, judged {' '.join(case.outcomes)}"
                  for case in inconsistent[:TEXT_LIST_LIMIT]]
    disagreements = [item for item in report.judgments if item.disagrees]
    if disagreements:
        lines += ["", f"disagreements ({len(disagreements)}):"]
        lines += [f"  {_printable(item.case)}: label {item.label}, judged {item.outcome}"
                  for item in disagreements[:TEXT_LIST_LIMIT]]
    if len(disagreements) > TEXT_LIST_LIMIT or len(inconsistent) > TEXT_LIST_LIMIT:
        lines.append(f"  (first {TEXT_LIST_LIMIT} shown; --format json or html lists all)")
    failed = failed_thresholds(report, thresholds) if thresholds is not None else ()
    if failed:
        lines += ["", "below threshold: " + "; ".join(failed)]
    return "\n".join(lines) + "\n"


def render_json(report: JudgeQuality, thresholds: Thresholds | None = None) -> str:
    return json.dumps(quality_json(report, thresholds), indent=2, ensure_ascii=False, allow_nan=False) + "\n"


_CSS = """
body{margin:0;font:14px/1.45 system-ui,sans-serif;background:#f6f7f9;color:#1d2330}main{max-width:1100px;
margin:0 auto;padding:24px}h1{font-size:22px;margin:0 0 6px}h2{font-size:16px;margin:26px 0 8px}
.caveat{background:#fffaeb;border:1px solid #fedf89;border-radius:8px;padding:8px 12px}
table{border-collapse:collapse;background:#fff;border:1px solid #e4e7ec}th,td{padding:6px 10px;
border-bottom:1px solid #e4e7ec;text-align:left;vertical-align:top}td.num{text-align:right}
td.agree{background:#ecfdf3}td.miss{background:#fef3f2}pre{white-space:pre-wrap;margin:0;max-height:18em;
overflow:auto;font:12px/1.4 ui-monospace,monospace}.bad{color:#b42318;font-weight:600}
"""


def _cell(value: object, css: str = "") -> str:
    cls = f' class="{css}"' if css else ""
    return f"<td{cls}>{escape(str(value))}</td>"


def _preview(text: str) -> str:
    shown = text if len(text) <= _PREVIEW_CHARS else text[:_PREVIEW_CHARS] + f"… [{len(text)} characters]"
    return f"<pre>{escape(shown)}</pre>"


def render_html(report: JudgeQuality, thresholds: Thresholds | None = None) -> str:
    """One self-contained page (inline CSS, no script, nothing fetched); every text escaped."""
    figures = report.agreement
    title = "verigate judge eval" if report.kind == "eval" else "verigate judge calibrate"
    parts = [f"<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title}</title>"
             f"<style>{_CSS}</style></head><body><main><h1>{title}</h1>"]
    if report.caveat:
        parts.append(f"<p class=\"caveat\">{escape(report.caveat)}</p>")
    failed = failed_thresholds(report, thresholds) if thresholds is not None else ()
    if failed:
        parts.append(f"<p class=\"bad\">Below threshold: {escape('; '.join(failed))}</p>")
    parts.append("<h2>Confusion matrix</h2><table><tr><th>label \\ judged</th><th>complete</th><th>incomplete</th>"
                 "<th>verification error</th></tr>")
    errors = agreement_errors(report)
    parts.append(f"<tr><th>complete</th>{_cell(f'TP {figures.tp}', 'agree')}{_cell(f'FN {figures.fn}', 'miss')}"
                 f"{_cell(errors['complete'])}</tr>")
    parts.append(f"<tr><th>incomplete</th>{_cell(f'FP {figures.fp}', 'miss')}{_cell(f'TN {figures.tn}', 'agree')}"
                 f"{_cell(errors['incomplete'])}</tr></table>")
    parts.append("<h2>Figures</h2><table>")
    for name, value in _figures(report, figures):
        parts.append(f"<tr><th>{escape(name)}</th>{_cell(value)}</tr>")
    parts.append("</table>")
    if report.repeat > 1:
        parts.append("<h2>Per case across repeats</h2><table><tr><th>case</th><th>label</th><th>judged</th>"
                     "<th>consistent</th></tr>")
        for case in report.cases:
            parts.append(f"<tr>{_cell(case.case)}{_cell(case.label)}{_cell(' '.join(case.outcomes))}"
                         f"{_cell('yes' if case.consistent else 'no', '' if case.consistent else 'miss')}</tr>")
        parts.append("</table>")
    disagreements = [item for item in report.judgments if item.disagrees]
    parts.append(f"<h2>Disagreements ({len(disagreements)})</h2>")
    if disagreements:
        parts.append("<table><tr><th>case</th><th>label</th><th>judged</th><th>request (redacted)</th>"
                     "<th>final text (redacted)</th><th>note</th></tr>")
        for item in disagreements:
            parts.append(f"<tr>{_cell(item.case)}{_cell(item.label)}{_cell(item.outcome, 'miss')}"
                         f"<td>{_preview(item.request)}</td><td>{_preview(item.final_text)}</td>"
                         f"{_cell(item.note)}</tr>")
        parts.append("</table>")
    else:
        parts.append("<p>None.</p>")
    errored = [item for item in report.judgments if item.outcome == "error"]
    if errored:
        parts.append(f"<h2>Verification errors ({len(errored)}; never agreement)</h2><table><tr><th>case</th>"
                     "<th>label</th><th>reason</th></tr>")
        parts += [f"<tr>{_cell(item.case)}{_cell(item.label)}{_cell(item.error or 'unknown', 'miss')}</tr>"
                  for item in errored]
        parts.append("</table>")
    parts.append("</main></body></html>\n")
    return "".join(parts)


def agreement_errors(report: JudgeQuality) -> dict[str, int]:
    """Verification errors by label (the matrix's third column)."""
    counts = {"complete": 0, "incomplete": 0}
    for item in report.judgments:
        if item.outcome == "error":
            counts[item.label] += 1
    return counts


def render(report: JudgeQuality, fmt: str, thresholds: Thresholds | None = None) -> str:
    renderers = {"text": render_text, "json": render_json, "html": render_html}
    return renderers[fmt](report, thresholds)
