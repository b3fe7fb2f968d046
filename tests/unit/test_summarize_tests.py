"""scripts/summarize-tests.py: the closing lines of the test command, naming what failed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SUMMARY = Path(__file__).resolve().parents[2] / "scripts" / "summarize-tests.py"

JUNIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" tests="3" failures="1" errors="0" skipped="1">
  <testcase classname="tests.unit.test_a" name="test_ok" time="0.1"/>
  <testcase classname="tests.unit.test_a" name="test_broken" time="0.1">
    <failure message="assert 1 == 2">long traceback</failure>
  </testcase>
  <testcase classname="tests.unit.test_a" name="test_skipped" time="0">
    <skipped message="no GPU"/>
  </testcase>
</testsuite></testsuites>
"""

JEST = {
    "numPassedTests": 1,
    "numFailedTests": 1,
    "numRuntimeErrorTestSuites": 1,
    "numPendingTests": 0,
    "numTodoTests": 0,
    "testResults": [
        {
            "name": "/repo/src/__tests__/format.spec.ts",
            "status": "failed",
            "message": "",
            "assertionResults": [
                {"fullName": "formats bytes", "status": "passed", "failureMessages": []},
                {
                    "fullName": "formats MiB",
                    "status": "failed",
                    "failureMessages": ["\x1b[2mexpect(\x1b[22mreceived).toBe(expected)\n\nExpected: 1"],
                },
            ],
        },
        {
            "name": "/repo/src/__tests__/views.spec.ts",
            "status": "failed",
            "message": "\n  Cannot find module '../views/Gone'",
            "assertionResults": [],
        },
    ],
}


def playwright(file: str, tests: list, skip_reason: str = "") -> dict:
    """A Playwright JSON report; a test whose status is "skipped" carries skip_reason as its annotation."""
    specs = [
        {
            "title": title,
            "file": file,
            "line": line,
            "tests": [
                {
                    "status": status,
                    "projectName": "",  # as Galata writes it
                    "annotations": [{"type": "skip", "description": skip_reason}] if status == "skipped" else [],
                    "results": [{"status": s, "error": {"message": m}} for s, m in results],
                }
            ],
        }
        for title, line, status, results in tests
    ]
    stats = {
        "expected": sum(t[2] == "expected" for t in tests),
        "unexpected": sum(t[2] == "unexpected" for t in tests),
        "flaky": sum(t[2] == "flaky" for t in tests),
        "skipped": sum(t[2] == "skipped" for t in tests),
    }
    return {"stats": stats, "suites": [{"title": file, "suites": [{"title": "describe", "specs": specs}]}]}


def run(results: Path, *args: str) -> str:
    return subprocess.run(
        [sys.executable, str(SUMMARY), str(results), *args], check=True, capture_output=True, text=True, timeout=60
    ).stdout


def junit(cases: list) -> str:
    """JUnit XML as pytest writes it: (classname, name, kind, message), kind "" (passed), skipped or failure."""
    body = "".join(
        f'<testcase classname="{c}" name="{n}" time="0.1">'
        + (f'<{k} message="{m}">text</{k}>' if k else "")
        + "</testcase>"
        for c, n, k, m in cases
    )
    return (
        f'<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" tests="{len(cases)}">'
        f"{body}</testsuite></testsuites>"
    )


def steps(results: Path, *rows: tuple) -> None:
    """results/steps.tsv as scripts/test.sh's run_step writes it: (name, status, seconds, reports)."""
    (results / "steps.tsv").write_text("".join("\t".join(map(str, row)) + "\n" for row in rows), encoding="utf-8")


def test_names_each_failed_test_with_its_first_error_line_and_the_flaky_ones(tmp_path: Path) -> None:
    (tmp_path / "pytest.xml").write_text(JUNIT, encoding="utf-8")
    (tmp_path / "jest.json").write_text(json.dumps(JEST), encoding="utf-8")
    (tmp_path / "playwright.json").write_text(
        json.dumps(
            playwright(
                "sidebar.spec.ts",
                [
                    ("shows the sidebar", 10, "expected", [("passed", "")]),
                    (
                        "follows a restart",
                        40,
                        "unexpected",
                        [
                            ("failed", "\x1b[31mError: expected live\x1b[39m\n  at line"),
                            ("failed", "Error: expected live"),
                        ],
                    ),
                    ("a helper skipped", 80, "flaky", [("failed", "Error: timeout"), ("passed", "")]),
                ],
            )
        ),
        encoding="utf-8",
    )

    out = run(tmp_path)

    assert "pytest: 1 passed, 1 failed, 1 skipped" in out
    assert "jest: 1 passed, 2 failed, 0 skipped" in out
    assert "galata: 2 passed, 1 failed, 0 skipped" in out
    assert "smoke journeys: no report" in out
    failed = out[out.index("Failed tests:") : out.index("Passed only on a retry")]
    assert "pytest: tests.unit.test_a::test_broken\n      assert 1 == 2" in failed
    assert "jest: format.spec.ts > formats MiB\n      expect(received).toBe(expected)" in failed
    assert "jest: views.spec.ts\n      Cannot find module '../views/Gone'" in failed
    assert "galata: sidebar.spec.ts:40 describe > follows a restart\n      Error: expected live" in failed
    assert "test_ok" not in out and "formats bytes" not in out and "shows the sidebar" not in out
    assert out.rstrip().endswith("galata: sidebar.spec.ts:80 describe > a helper skipped")


def test_says_nothing_more_when_all_passed(tmp_path: Path) -> None:
    (tmp_path / "playwright.json").write_text(
        json.dumps(
            playwright(
                "cells.spec.ts",
                [
                    ("records a cell", 5, "expected", [("passed", "")]),
                ],
            )
        ),
        encoding="utf-8",
    )

    out = run(tmp_path)

    assert "galata: 1 passed, 0 failed, 0 skipped" in out
    assert "Failed tests" not in out and "retry" not in out


CUDA = "needs a CUDA GPU and a CUDA build of torch (torch.cuda.is_available() -> no)"


def test_lists_every_step_with_its_outcome_counts_and_time_and_the_total(tmp_path: Path) -> None:
    (tmp_path / "pytest.xml").write_text(
        junit(
            [
                ("tests.unit.test_a", "test_ok", "", ""),
                ("tests.cuda.test_oom_cuda", "test_oom", "skipped", CUDA),
            ]
        ),
        encoding="utf-8",
    )
    kit = tmp_path / "gpu-report"
    kit.mkdir()
    for part in ("exclusive", "parallel"):  # a glob reads both
        (kit / f"junit-{part}.xml").write_text(
            junit([("tests.cuda.test_x_cuda", f"test_{part}", "skipped", CUDA)]), encoding="utf-8"
        )
    steps(
        tmp_path,
        ("Setup", 0, 12, ""),
        ("pytest", 0, 372, "pytest.xml"),
        ("GPU kit", 0, 95, f"{kit}/junit-*.xml"),
        ("Packaging", 1, 61, ""),
        ("Python lint", 0, 3, ""),
        ("jest", 0, 180, "jest.json"),
    )

    out = run(tmp_path, "--elapsed", "1310")
    rows = {line.split("  ")[0]: line for line in out.splitlines()}

    assert rows["Setup"].split()[1:] == ["ok", "12", "s"]
    assert rows["pytest"].split()[1:] == ["ok", "1", "0", "1", "6", "min", "12", "s"]
    assert rows["GPU kit"].split()[2:] == ["ok", "0", "0", "2", "1", "min", "35", "s"]
    assert rows["Packaging"].split()[1:] == ["FAILED", "(exit", "1)", "1", "min", "01", "s"]
    assert rows["Python lint"].split()[2:] == ["ok", "3", "s"]
    assert "no report" in rows["jest"]
    assert rows["total time"].split()[2:] == ["21", "min", "50", "s"]
    assert "all: 1 passed, 0 failed, 3 skipped" in out.splitlines()


def test_a_test_skipped_in_one_step_and_run_in_another_counts_once_as_run(tmp_path: Path) -> None:
    death = ("death-container.spec.ts", 56, "expected", [("passed", "")])
    (tmp_path / "playwright.json").write_text(
        json.dumps(
            playwright(
                "death-container.spec.ts",
                [
                    death[:2] + ("skipped", []),
                    ("shows the sidebar", 10, "expected", [("passed", "")]),
                ],
                skip_reason="the kernels do not run in the test cgroup here",
            )
        ),
        encoding="utf-8",
    )
    (tmp_path / "playwright-cgroup.json").write_text(
        json.dumps(playwright("death-container.spec.ts", [death])), encoding="utf-8"
    )
    steps(tmp_path, ("Galata", 0, 400, "playwright.json"), ("Galata (cgroup limit)", 0, 90, "playwright-cgroup.json"))

    out = run(tmp_path)

    assert "all: 2 passed, 0 failed, 0 skipped" in out.splitlines()
    assert "1 ran in more than one step" in out
    assert "Skipped" not in out


def test_skips_are_listed_once_per_reason_with_their_steps_and_files(tmp_path: Path) -> None:
    (tmp_path / "pytest.xml").write_text(
        junit(
            [(f"tests.cuda.test_{i}_cuda", "test_it", "skipped", CUDA) for i in range(26)]
            + [("tests.e2e.test_tf_e2e", "test_tf", "skipped", "needs tensorflow")]
        ),
        encoding="utf-8",
    )
    (tmp_path / "jest.json").write_text(
        json.dumps(
            {
                "testResults": [
                    {
                        "name": "/nowhere/src/__tests__/format.spec.ts",
                        "status": "passed",
                        "message": "",
                        "assertionResults": [{"fullName": "formats TiB", "status": "pending", "failureMessages": []}],
                    }
                ]
            }
        ),
        encoding="utf-8",
    )
    (tmp_path / "playwright-cgroup.json").write_text(
        json.dumps(
            playwright(
                "death-container.spec.ts",
                [
                    ("killed at its limit", 56, "skipped", []),
                ],
                skip_reason="the kernels do not run in the test cgroup here",
            )
        ),
        encoding="utf-8",
    )
    steps(
        tmp_path,
        ("pytest", 0, 300, "pytest.xml"),
        ("jest", 0, 100, "jest.json"),
        ("Galata (cgroup limit)", 0, 60, "playwright-cgroup.json"),
    )

    out = run(tmp_path)
    skipped = out[out.index("Skipped, by reason:") :].splitlines()[1:]

    assert "all: 0 passed, 0 failed, 29 skipped" in out
    assert skipped[0] == f"  26 (pytest; 26 files in tests/cuda/): {CUDA}"
    assert "  1 (pytest; tests.e2e.test_tf_e2e::test_tf): needs tensorflow" in skipped
    assert "  1 (jest; format.spec.ts > formats TiB): marked pending in the source (format.spec.ts)" in skipped
    assert (
        "  1 (Galata (cgroup limit); death-container.spec.ts:56 describe > killed at its limit):"
        " the kernels do not run in the test cgroup here"
    ) in skipped
    assert len(skipped) == 4


def one_test_in_two_steps(results: Path, in_pytest: tuple, in_kit: tuple) -> str:
    """The summary where pytest and the GPU kit both ran one test: (kind, message) in each."""
    for file, (kind, message) in (("pytest.xml", in_pytest), ("kit.xml", in_kit)):
        (results / file).write_text(junit([("tests.cuda.test_oom_cuda", "test_oom", kind, message)]), encoding="utf-8")
    steps(results, ("pytest", 0, 1, "pytest.xml"), ("GPU kit", 1, 1, "kit.xml"))
    return run(results)


def test_a_test_skipped_for_different_reasons_in_two_steps_gives_both(tmp_path: Path) -> None:
    out = one_test_in_two_steps(tmp_path, ("skipped", CUDA), ("skipped", "no torch here"))

    assert "all: 0 passed, 0 failed, 1 skipped" in out
    assert f"      pytest: {CUDA}" in out and "      GPU kit: no torch here" in out


def test_a_failure_in_any_step_fails_the_test_once(tmp_path: Path) -> None:
    out = one_test_in_two_steps(tmp_path, ("skipped", CUDA), ("failure", "boom"))

    assert "all: 0 passed, 1 failed, 0 skipped" in out
    assert out.rstrip().endswith("GPU kit: tests.cuda.test_oom_cuda::test_oom\n      boom")


def test_the_same_journey_in_two_projects_is_two_tests(tmp_path: Path) -> None:
    report = playwright("journey.spec.ts", [("a notebook's journey", 20, "expected", [("passed", "")])])
    spec = report["suites"][0]["suites"][0]["specs"][0]
    spec["tests"] = [dict(spec["tests"][0], projectName=name) for name in ("jupyterlab-4.2.7", "notebook-7.2.3")]
    (tmp_path / "smoke-journeys.json").write_text(json.dumps(report), encoding="utf-8")
    steps(tmp_path, ("Smoke journeys", 0, 200, "smoke-journeys.json"))

    assert "all: 2 passed, 0 failed, 0 skipped" in run(tmp_path).splitlines()
