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


def playwright(file: str, tests: list) -> dict:
    specs = [
        {
            "title": title,
            "file": file,
            "line": line,
            "tests": [{"status": status, "results": [{"status": s, "error": {"message": m}} for s, m in results]}],
        }
        for title, line, status, results in tests
    ]
    stats = {
        "expected": sum(t[2] == "expected" for t in tests),
        "unexpected": sum(t[2] == "unexpected" for t in tests),
        "flaky": sum(t[2] == "flaky" for t in tests),
        "skipped": 0,
    }
    return {"stats": stats, "suites": [{"title": file, "suites": [{"title": "describe", "specs": specs}]}]}


def run(results: Path) -> str:
    return subprocess.run(
        [sys.executable, str(SUMMARY), str(results)], check=True, capture_output=True, text=True, timeout=60
    ).stdout


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
    assert "galata: sidebar.spec.ts:40 follows a restart\n      Error: expected live" in failed
    assert "test_ok" not in out and "formats bytes" not in out and "shows the sidebar" not in out
    assert out.rstrip().endswith("galata: sidebar.spec.ts:80 a helper skipped")


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
