"""Print one closing line over every test suite that scripts/test.sh ran.

Reads the machine-readable reports the runners wrote (pytest JUnit XML, jest
JSON, Playwright JSON of Galata and of the smoke journeys) and prints, per suite and in total,
`N passed, N failed, N skipped`. A missing report is said, not guessed.

Then it names each test that failed, with the first line of its error, and each
test that passed only on a retry: printed last, so that a log cut to its end
(CI keeps the tail) still says what failed, after thousands of lines of
server logs.
"""

from __future__ import annotations

import json
import re
import sys
import xml.etree.ElementTree as ElementTree
from collections.abc import Iterator
from pathlib import Path

Counts = dict[str, int]
# (suite, test, first line of its error); the error is "" for a test that passed on a retry.
Problem = tuple[str, str, str]

ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*m")


def first_line(text: str | None) -> str:
    """The first non-blank line of an error, without terminal colours, at most 200 characters."""
    for line in ANSI_ESCAPE.sub("", text or "").splitlines():
        if line.strip():
            return line.strip()[:200]
    return "(no message)"


def pytest_counts(path: Path) -> Counts | None:
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


def jest_counts(path: Path) -> Counts | None:
    if not path.exists():
        return None
    report = json.loads(path.read_text())
    return {
        "passed": report.get("numPassedTests", 0),
        "failed": report.get("numFailedTests", 0) + report.get("numRuntimeErrorTestSuites", 0),
        "skipped": report.get("numPendingTests", 0) + report.get("numTodoTests", 0),
    }


def playwright_counts(path: Path) -> Counts | None:
    if not path.exists():
        return None
    stats = json.loads(path.read_text()).get("stats", {})
    return {
        "passed": stats.get("expected", 0) + stats.get("flaky", 0),
        "failed": stats.get("unexpected", 0),
        "skipped": stats.get("skipped", 0),
    }


def pytest_failures(path: Path) -> Iterator[Problem]:
    if not path.exists():
        return
    for case in ElementTree.parse(path).getroot().iter("testcase"):
        for kind in ("failure", "error"):
            problem = case.find(kind)
            if problem is not None:
                name = f"{case.get('classname', '')}::{case.get('name', '')}"
                yield ("pytest", name, first_line(problem.get("message") or problem.text))


def jest_failures(path: Path) -> Iterator[Problem]:
    if not path.exists():
        return
    for suite in json.loads(path.read_text()).get("testResults", []):
        file = Path(suite.get("name", "")).name
        failed = [test for test in suite.get("assertionResults", []) if test.get("status") == "failed"]
        for test in failed:
            yield (
                "jest",
                f"{file} > {test.get('fullName', '')}",
                first_line("\n".join(test.get("failureMessages") or [])),
            )
        if suite.get("status") == "failed" and not failed:  # the file did not run (a syntax error, a missing module)
            yield ("jest", file, first_line(suite.get("message")))


def playwright_problems(suite_name: str, path: Path) -> Iterator[Problem]:
    if not path.exists():
        return

    def walk(suite: dict) -> Iterator[Problem]:
        for spec in suite.get("specs", []):
            for test in spec.get("tests", []):
                status = test.get("status")
                if status not in ("unexpected", "flaky"):
                    continue
                name = f"{spec.get('file', '')}:{spec.get('line', '')} {spec.get('title', '')}"
                if status == "flaky":
                    yield (suite_name, name, "")
                    continue
                errors = [result.get("error") or {} for result in test.get("results", [])]
                yield (suite_name, name, first_line(next((e.get("message") for e in errors if e.get("message")), None)))
        for child in suite.get("suites", []):
            yield from walk(child)

    for suite in json.loads(path.read_text()).get("suites", []):
        yield from walk(suite)


def problems(results: Path) -> list[Problem]:
    found: list[Problem] = []
    found.extend(pytest_failures(results / "pytest.xml"))
    found.extend(jest_failures(results / "jest.json"))
    for name, file in PLAYWRIGHT_REPORTS.items():
        found.extend(playwright_problems(name, results / file))
    return found


PLAYWRIGHT_REPORTS = {
    "galata": "playwright.json",
    "galata (cgroup limit)": "playwright-cgroup.json",
    "smoke journeys": "smoke-journeys.json",
}


def main(results: Path) -> int:
    suites = {
        "pytest": pytest_counts(results / "pytest.xml"),
        "jest": jest_counts(results / "jest.json"),
        **{name: playwright_counts(results / file) for name, file in PLAYWRIGHT_REPORTS.items()},
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
    found = problems(results)
    failed = [p for p in found if p[2]]
    flaky = [p for p in found if not p[2]]
    if failed:
        print("\nFailed tests:")
        for suite, name, error in failed:
            print(f"  {suite}: {name}\n      {error}")
    if flaky:
        print("\nPassed only on a retry (flaky):")
        for suite, name, _ in flaky:
            print(f"  {suite}: {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1] if len(sys.argv) > 1 else "build/test-results")))
