"""Print one closing line over every test suite that scripts/test.sh ran.

Reads the machine-readable reports the runners wrote (pytest JUnit XML, jest
JSON, Playwright JSON of Galata and of the smoke journeys) and prints, per suite and in total,
`N passed, N failed, N skipped`. A missing report is said, not guessed.
"""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path
from typing import Dict, Optional


Counts = Dict[str, int]


def pytest_counts(path: Path) -> Optional[Counts]:
    if not path.exists():
        return None
    root = ElementTree.parse(path).getroot()
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    total = failed = skipped = 0
    for suite in suites:
        total += int(suite.get("tests", 0))
        failed += int(suite.get("failures", 0)) + int(suite.get("errors", 0))
        skipped += int(suite.get("skipped", 0))
    return {"passed": total - failed - skipped, "failed": failed, "skipped": skipped}


def jest_counts(path: Path) -> Optional[Counts]:
    if not path.exists():
        return None
    report = json.loads(path.read_text())
    return {
        "passed": report.get("numPassedTests", 0),
        "failed": report.get("numFailedTests", 0) + report.get("numRuntimeErrorTestSuites", 0),
        "skipped": report.get("numPendingTests", 0) + report.get("numTodoTests", 0),
    }


def playwright_counts(path: Path) -> Optional[Counts]:
    if not path.exists():
        return None
    stats = json.loads(path.read_text()).get("stats", {})
    return {
        "passed": stats.get("expected", 0) + stats.get("flaky", 0),
        "failed": stats.get("unexpected", 0),
        "skipped": stats.get("skipped", 0),
    }


def main(results: Path) -> int:
    suites = {
        "pytest": pytest_counts(results / "pytest.xml"),
        "jest": jest_counts(results / "jest.json"),
        "galata": playwright_counts(results / "playwright.json"),
        "galata (cgroup limit)": playwright_counts(results / "playwright-cgroup.json"),
        "smoke journeys": playwright_counts(results / "smoke-journeys.json"),
    }
    total = {"passed": 0, "failed": 0, "skipped": 0}
    for name, counts in suites.items():
        if counts is None:
            print(f"{name}: no report")
            continue
        print(f"{name}: {counts['passed']} passed, {counts['failed']} failed, {counts['skipped']} skipped")
        for key in total:
            total[key] += counts[key]
    print(f"all: {total['passed']} passed, {total['failed']} failed, {total['skipped']} skipped")
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1] if len(sys.argv) > 1 else "build/test-results")))
