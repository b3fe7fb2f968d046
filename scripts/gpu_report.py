"""Writes the GPU check's report from what scripts/gpu-check.sh left in a folder.

    python scripts/gpu_report.py REPORT_DIR [--elapsed SECONDS] [--failed "STEP ..."]
                                 [--not-run "STEP ..."] [--pytest-k EXPRESSION]

Reads the JUnit XML of the CUDA suite (each check's outcome, time and the
figures it recorded as properties) and the benchmarks' JSON, adds the machine
(GPU, driver, torch and CUDA versions), and writes REPORT_DIR/report.json and
REPORT_DIR/report.md. A run narrowed to some steps (``--not-run``) or checks
(``--pytest-k``) says so first, so that it cannot pass for the whole kit.
Standard library only.
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

ENVIRONMENT_PROBE = r"""
import json, platform
info = {"python": platform.python_version()}
try:
    import torch
    info["torch"] = torch.__version__
    info["torch_cuda"] = torch.version.cuda
    info["cuda_available"] = torch.cuda.is_available()
    if info["cuda_available"]:
        info["gpus"] = [
            {"name": torch.cuda.get_device_name(i), "total_bytes": torch.cuda.get_device_properties(i).total_memory}
            for i in range(torch.cuda.device_count())
        ]
except Exception as exc:
    info["torch_error"] = repr(exc)
try:
    import pynvml
    pynvml.nvmlInit()
    version = pynvml.nvmlSystemGetDriverVersion()
    info["driver"] = version.decode() if isinstance(version, bytes) else version
    pynvml.nvmlShutdown()
except Exception as exc:
    info["nvml_error"] = repr(exc)
print(json.dumps(info))
"""


def environment() -> dict[str, Any]:
    """The machine, read in a child process (this one never imports torch)."""
    try:
        # Within the kit's 50 s for the report: a hung probe costs its figures, not the report.
        out = subprocess.run([sys.executable, "-c", ENVIRONMENT_PROBE], capture_output=True, text=True, timeout=40)
        info = json.loads(out.stdout.strip().splitlines()[-1])
    except subprocess.TimeoutExpired:
        info = {"probe_error": "the probe of torch and NVML took over 40 s"}
    except (IndexError, ValueError):
        info = {"probe_error": out.stderr.strip()[-500:]}
    info["platform"] = platform.platform()
    return info


def checks(folder: Path) -> list[dict[str, Any]]:
    found = []
    for xml_file in sorted(folder.glob("junit-*.xml")):
        try:
            root = ET.parse(xml_file).getroot()
        except ET.ParseError as exc:  # a step killed while writing it
            found.append(
                {
                    "check": xml_file.name,
                    "outcome": "error",
                    "seconds": 0,
                    "message": f"unreadable JUnit XML: {exc}",
                    "figures": {},
                }
            )
            continue
        for case in root.iter("testcase"):
            outcome, message = "passed", ""
            for kind in ("failure", "error", "skipped"):
                node = case.find(kind)
                if node is not None:
                    outcome = {"failure": "failed", "error": "error", "skipped": "skipped"}[kind]
                    message = (node.get("message") or node.text or "").strip()
                    break
            props = {}
            for prop in case.iter("property"):
                try:
                    props[prop.get("name")] = json.loads(prop.get("value") or "null")
                except ValueError:
                    props[prop.get("name")] = prop.get("value")
            found.append(
                {
                    "check": f"{case.get('classname', '').rsplit('.', 1)[-1]}::{case.get('name')}",
                    "outcome": outcome,
                    "seconds": round(float(case.get("time") or 0), 2),
                    "message": message[:2000],
                    "figures": props,
                }
            )
    return found


def benchmarks(folder: Path) -> list[dict[str, Any]]:
    found = []
    for path in sorted(folder.glob("bench-*.json")):
        try:
            found.append(json.loads(path.read_text(encoding="utf-8")))
        except ValueError as exc:
            found.append({"benchmark": path.stem, "error": f"unreadable JSON: {exc}"})
    for log in sorted(folder.glob("bench-*.log")):
        if not (folder / f"{log.stem}.json").exists():
            tail = log.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-3:]
            found.append({"benchmark": log.stem[len("bench-") :], "error": " / ".join(tail) or "no output"})
    return found


def _figure(value: Any) -> str:
    text = json.dumps(value) if not isinstance(value, str) else value
    return text if len(text) <= 160 else text[:157] + "..."


def _accuracy_table(rows: list[dict[str, Any]]) -> list[str]:
    """The memory estimate's predicted training peaks against the measured ones, one row per model and batch size."""
    lines = ["", "| model | batch size | predicted MiB | measured MiB | error % |", "|---|---|---|---|---|"]
    for r in rows:
        lines.append(
            f"| {r['model']} | {r['batch_size']} | {r['predicted_bytes'] / 2**20:.1f} |"
            f" {r['measured_bytes'] / 2**20:.1f} | {r['error_percent']:+.1f} |"
        )
    return lines


def markdown(report: dict[str, Any]) -> str:
    env = report["environment"]
    gpus = env.get("gpus") or []
    lines = [
        "# jupyterlab-vram GPU check",
        "",
        f"- GPU: {', '.join(g['name'] for g in gpus) or 'none visible'}",
        f"- driver: {env.get('driver', 'unknown')}; torch {env.get('torch', 'absent')} (CUDA {env.get('torch_cuda')});"
        f" Python {env.get('python')}",
        f"- platform: {env.get('platform')}",
        f"- took {report['elapsed_s']} s; failed steps: {', '.join(report['failed_steps']) or 'none'}",
        "",
    ]
    narrowed = report.get("narrowed")
    if narrowed:
        left_out = [f"the steps {', '.join(narrowed['not_run'])}"] if narrowed["not_run"] else []
        if narrowed["pytest_k"]:
            left_out.append(f"the checks that `-k {narrowed['pytest_k']}` does not select")
        lines[1:1] = ["", f"**A partial run, not the whole kit: it left out {' and '.join(left_out)}.**"]
    counts: dict[str, int] = {}
    for c in report["checks"]:
        counts[c["outcome"]] = counts.get(c["outcome"], 0) + 1
    lines += [f"## Checks: {', '.join(f'{n} {k}' for k, n in sorted(counts.items())) or 'none ran'}", ""]
    lines += ["| check | outcome | s | why skipped |", "|---|---|---|---|"]
    lines += [
        f"| {c['check']} | {c['outcome']} | {c['seconds']} | "
        f"{_figure(c['message']) if c['outcome'] == 'skipped' else ''} |"
        for c in report["checks"]
    ]
    for c in report["checks"]:
        if not c["figures"] and c["outcome"] in ("passed", "skipped"):
            continue
        lines += ["", f"### {c['check']} ({c['outcome']})"]
        if c["outcome"] in ("failed", "error") and c["message"]:
            lines += ["", "```", c["message"][:1200], "```"]
        for name, value in c["figures"].items():
            if name == "demo_cells" and isinstance(value, list):
                lines += [
                    "",
                    "| cell | first line | s | Δ allocated | peak | reserved after | exact |",
                    "|---|---|---|---|---|---|---|",
                ]
                for r in value:
                    lines.append(
                        f"| {r['cell']} | `{r['first_line']}` | {r['duration_s']} | {r['allocated_delta_bytes']} |"
                        f" {r['allocated_peak_bytes']} | {r['reserved_after_bytes']} | {r['peak_exact']} |"
                    )
            elif name == "estimate_accuracy" and isinstance(value, list):
                lines += _accuracy_table(value)
            else:
                lines.append(f"- {name}: {_figure(value)}")
    lines += ["", "## Benchmarks (GPU)", ""]
    for b in report["benchmarks"]:
        if "error" in b:
            lines += [f"- {b['benchmark']}: {b['error']}"]
            continue
        lines += [f"### {b['benchmark']} ({b.get('device')})", "", f"- params: {_figure(b.get('params'))}"]
        lines += [f"- {k}: {v}" for k, v in (b.get("figures") or {}).items()]
        for t in b.get("targets") or []:
            verdict = "met" if t.get("met") else "NOT met"
            lines.append(f"- target {t['name']}: {t['value']} {t.get('unit', '')} (limit {t['limit']}): {verdict}")
        lines.append("")
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--elapsed", type=int, default=None)
    parser.add_argument("--failed", default="")
    parser.add_argument("--not-run", default="", help="steps the run left out (VRAM_GPU_ONLY)")
    parser.add_argument("--pytest-k", default="", help="the CUDA suite's -k selection (VRAM_GPU_K)")
    args = parser.parse_args()
    not_run, pytest_k = args.not_run.split(), args.pytest_k.strip()
    report = {
        "environment": environment(),
        "elapsed_s": args.elapsed,
        "failed_steps": args.failed.split(),
        # None: the whole kit ran
        "narrowed": {"not_run": not_run, "pytest_k": pytest_k} if not_run or pytest_k else None,
        "checks": checks(args.folder),
        "benchmarks": benchmarks(args.folder),
    }
    (args.folder / "report.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    (args.folder / "report.md").write_text(markdown(report), encoding="utf-8")
    print(f"report: {args.folder / 'report.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
