"""scripts/gpu_report.py: the GPU kit's report from JUnit XML and benchmark JSON."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from xml.sax.saxutils import quoteattr

REPORT = Path(__file__).resolve().parents[2] / "scripts" / "gpu_report.py"

JUNIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest">
  <testcase classname="tests.cuda.test_figures_cuda" name="test_sample" time="1.25">
    <properties><property name="allocated_bytes" value="1048576"/>
    <property name="causes" value='["fragmentation", "stale_references"]'/></properties>
  </testcase>
  <testcase classname="tests.cuda.test_oom_cuda" name="test_too_big" time="0.5">
    <failure message="assert 'stale_references' == 'too_big'">long traceback</failure>
  </testcase>
  <testcase classname="tests.cuda.test_demo_cuda" name="test_demo" time="0">
    <skipped type="pytest.skip" message="needs a CUDA GPU (torch.cuda.is_available() -> no)"/>
  </testcase>
</testsuite></testsuites>
"""


def test_report_has_every_check_its_figures_and_the_benchmarks(tmp_path: Path) -> None:
    (tmp_path / "junit-exclusive.xml").write_text(JUNIT, encoding="utf-8")
    bench = {
        "benchmark": "inspect_cost",
        "device": "cuda",
        "params": {"tensors": 1000},
        "figures": {"elapsed_ms_median": 41.5},
        "targets": [{"name": "inspect", "value": 41.5, "limit": 200, "unit": "ms", "met": True}],
    }
    (tmp_path / "bench-inspect_cost.json").write_text(json.dumps(bench), encoding="utf-8")
    (tmp_path / "bench-sampler_overhead.log").write_text("Traceback ...\nRuntimeError: boom\n", encoding="utf-8")
    subprocess.run(
        [sys.executable, str(REPORT), str(tmp_path), "--elapsed", "312", "--failed", "cuda"],
        check=True,
        capture_output=True,
        timeout=120,
    )

    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert report["elapsed_s"] == 312 and report["failed_steps"] == ["cuda"]
    assert "python" in report["environment"] and "platform" in report["environment"]
    by_name = {c["check"]: c for c in report["checks"]}
    assert by_name["test_figures_cuda::test_sample"]["figures"] == {
        "allocated_bytes": 1048576,
        "causes": ["fragmentation", "stale_references"],
    }
    assert by_name["test_oom_cuda::test_too_big"]["outcome"] == "failed"
    assert "stale_references" in by_name["test_oom_cuda::test_too_big"]["message"]
    assert by_name["test_demo_cuda::test_demo"]["outcome"] == "skipped"
    assert [b["benchmark"] for b in report["benchmarks"]] == ["inspect_cost", "sampler_overhead"]
    assert report["benchmarks"][1]["error"] == "Traceback ... / RuntimeError: boom"

    text = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "## Checks: 1 failed, 1 passed, 1 skipped" in text
    assert "- allocated_bytes: 1048576" in text
    assert "target inspect: 41.5 ms (limit 200): met" in text
    assert "needs a CUDA GPU" in text


def test_the_estimate_accuracy_figure_is_a_table_of_predicted_against_measured(tmp_path: Path) -> None:
    rows = [
        {"model": "mlp", "batch_size": 1024, "predicted_bytes": 300 * 2**20, "measured_bytes": 288 * 2**20,
         "error_percent": 4.17},
        {"model": "gpt_amp", "batch_size": 64, "predicted_bytes": 3 * 2**30, "measured_bytes": 3584 * 2**20,
         "error_percent": -14.29},
    ]  # fmt: skip
    junit = (
        '<testsuites><testsuite name="pytest"><testcase classname="tests.cuda.test_estimate_cuda" name="test_peaks"'
        f' time="80"><properties><property name="estimate_accuracy" value={quoteattr(json.dumps(rows))}/>'
        "</properties></testcase></testsuite></testsuites>"
    )
    (tmp_path / "junit-parallel.xml").write_text(junit, encoding="utf-8")
    subprocess.run([sys.executable, str(REPORT), str(tmp_path)], check=True, capture_output=True, timeout=120)

    text = (tmp_path / "report.md").read_text(encoding="utf-8").splitlines()
    header = text.index("| model | batch size | predicted MiB | measured MiB | error % |")
    assert text[header + 2 : header + 4] == [
        "| mlp | 1024 | 300.0 | 288.0 | +4.2 |",
        "| gpt_amp | 64 | 3072.0 | 3584.0 | -14.3 |",
    ]
    assert not any(line.startswith("- estimate_accuracy") for line in text)  # a table, not a JSON line


def test_a_junit_file_cut_short_by_a_stopped_step_is_named_and_the_rest_still_reported(tmp_path: Path) -> None:
    (tmp_path / "junit-exclusive.xml").write_text(JUNIT, encoding="utf-8")
    (tmp_path / "junit-parallel.xml").write_text(JUNIT[: len(JUNIT) // 2], encoding="utf-8")  # killed mid-write
    subprocess.run(
        [sys.executable, str(REPORT), str(tmp_path), "--failed", "cuda"], check=True, capture_output=True, timeout=120
    )

    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    by_name = {c["check"]: c for c in report["checks"]}
    assert by_name["junit-parallel.xml"]["outcome"] == "error"
    assert "unreadable JUnit XML" in by_name["junit-parallel.xml"]["message"]
    assert by_name["test_figures_cuda::test_sample"]["outcome"] == "passed"  # the whole file still counts
    assert "## Checks: 1 error, 1 failed, 1 passed, 1 skipped" in (tmp_path / "report.md").read_text(encoding="utf-8")


def test_a_narrowed_run_says_so_first_with_what_it_left_out(tmp_path: Path) -> None:
    (tmp_path / "junit-exclusive.xml").write_text(JUNIT, encoding="utf-8")
    subprocess.run(
        [
            sys.executable,
            str(REPORT),
            str(tmp_path),
            "--not-run",
            "suite inspect_cost",
            "--pytest-k",
            "no_context or oom",
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )

    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert report["narrowed"] == {"not_run": ["suite", "inspect_cost"], "pytest_k": "no_context or oom"}
    text = (tmp_path / "report.md").read_text(encoding="utf-8").splitlines()
    assert text[0] == "# jupyterlab-vram GPU check"
    assert text[2] == (
        "**A partial run, not the whole kit: it left out the steps suite, inspect_cost and the checks"
        " that `-k no_context or oom` does not select.**"
    )


def test_a_whole_run_is_not_called_partial(tmp_path: Path) -> None:
    (tmp_path / "junit-exclusive.xml").write_text(JUNIT, encoding="utf-8")
    subprocess.run(
        [sys.executable, str(REPORT), str(tmp_path), "--not-run", "", "--pytest-k", ""],
        check=True,
        capture_output=True,
        timeout=120,
    )

    assert json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))["narrowed"] is None
    assert "partial" not in (tmp_path / "report.md").read_text(encoding="utf-8")


def test_the_kit_refuses_a_step_it_does_not_have_before_installing_anything(tmp_path: Path) -> None:
    kit = REPORT.parent / "gpu-check.sh"
    out = tmp_path / "report"
    env = {**os.environ, "PYTHON": sys.executable, "VRAM_GPU_ONLY": "cell_hooks_overhead hooks"}
    run = subprocess.run(
        ["bash", str(kit), str(tmp_path / "no-wheels"), str(out)], capture_output=True, text=True, timeout=120, env=env
    )

    assert run.returncode == 1, run.stdout + run.stderr
    assert "VRAM_GPU_ONLY names 'hooks', which is no step of the kit" in run.stdout
    assert "Offline venv" not in run.stdout
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["failed_steps"] == ["unknown-step:hooks"]
    assert report["narrowed"]["not_run"] == [
        "exclusive",
        "suite",
        "sampler_overhead",
        "inspect_cost",
        "allocation_recording_cost",
    ]
