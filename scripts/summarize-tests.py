"""Print the closing summary of scripts/test.sh: every step, its outcome, counts and time.

scripts/test.sh runs each step through `run_step`, which appends one line to
RESULTS/steps.tsv: the step's name, its exit status, its time in seconds, and
the reports its runner wrote (pytest JUnit XML, jest JSON, Playwright JSON; a
path relative to RESULTS, or absolute; globs allowed). A step without a report
(setup, packaging, lint) is listed with its outcome and time alone.

The counts come from those reports, never from the step's output. Each test is
counted once in the total: a test that several steps report (the CUDA suite in
pytest and in the GPU kit; death-container.spec.ts, which only the cgroup step
runs for real) passed if it passed in one and failed in none, and is skipped
only if every step that reports it skipped it. Skips are then listed once per
reason, with where they come from.

Last it names each test that failed, with the first line of its error, and each
test that passed only on a retry: printed last, so that a log cut to its end
(CI keeps the tail) still says what failed, after thousands of lines of server
logs.

    python scripts/summarize-tests.py [RESULTS] [--elapsed SECONDS]

Without RESULTS/steps.tsv (an older results folder, or the reports of a run by
hand) it reads the default report of each suite.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import sys
import xml.etree.ElementTree as ElementTree
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

# (suite, test, first line of its error); the error is "" for a test that passed on a retry.
Problem = tuple[str, str, str]

ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*m")

PASSED, FAILED, SKIPPED, FLAKY = "passed", "failed", "skipped", "flaky"


@dataclass
class Result:
    """One test as one report saw it."""

    key: str  # the same test in two reports has the same key
    name: str  # for people: file or class, and title
    location: str  # the file it is in, for grouping skips
    status: str  # PASSED, FAILED, SKIPPED or FLAKY (passed on a retry)
    detail: str = ""  # the first line of the error, or the reason of the skip


@dataclass
class Step:
    name: str
    status: int
    seconds: int
    reports: list[str] = field(default_factory=list)


def first_line(text: str | None) -> str:
    """The first non-blank line of an error, without terminal colours, at most 200 characters."""
    for line in ANSI_ESCAPE.sub("", text or "").splitlines():
        if line.strip():
            return line.strip()[:200]
    return "(no message)"


def duration(seconds: float) -> str:
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {seconds:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


# --- the reports ---------------------------------------------------------------------------


def shown_path(path: str) -> str:
    """A test file's path as people read it: relative to here when under it, else its name."""
    if os.path.isabs(path):
        relative = os.path.relpath(path)
        return Path(path).name if relative.startswith("..") else relative
    return path


def pytest_results(path: Path) -> Iterator[Result]:
    for case in ElementTree.parse(path).getroot().iter("testcase"):
        classname, name = case.get("classname", ""), case.get("name", "")
        key = f"pytest:{classname}::{name}"
        # "tests.cuda.test_oom_cuda" -> tests/cuda/test_oom_cuda.py (xunit1 and xunit2 agree on it)
        location = classname.replace(".", "/") + ".py" if classname else case.get("file", "")
        status, detail = PASSED, ""
        for kind in ("failure", "error"):
            problem = case.find(kind)
            if problem is not None:
                status, detail = FAILED, first_line(problem.get("message") or problem.text)
                break
        else:
            skipped = case.find("skipped")
            if skipped is not None:
                status, detail = SKIPPED, first_line(skipped.get("message") or skipped.text)
        yield Result(key, f"{classname}::{name}", location, status, detail)


def jest_results(report: dict) -> Iterator[Result]:
    for suite in report.get("testResults", []):
        file = shown_path(suite.get("name", ""))
        tests = suite.get("assertionResults", [])
        for test in tests:
            status = {"passed": PASSED, "failed": FAILED}.get(test.get("status"), SKIPPED)
            detail = {
                FAILED: first_line("\n".join(test.get("failureMessages") or [])),
                # jest keeps no reason for test.skip / test.todo: say which it was
                SKIPPED: f"marked {test.get('status')} in the source ({file})",
            }.get(status, "")
            yield Result(
                f"jest:{file}:{test.get('fullName', '')}", f"{file} > {test.get('fullName', '')}", file, status, detail
            )
        if suite.get("status") == "failed" and not any(t.get("status") == "failed" for t in tests):
            # the file did not run (a syntax error, a missing module)
            yield Result(f"jest:{file}", file, file, FAILED, first_line(suite.get("message")))


def playwright_results(report: dict) -> Iterator[Result]:
    def walk(suite: dict, titles: list[str]) -> Iterator[Result]:
        for spec in suite.get("specs", []):
            for test in spec.get("tests", []):
                file = spec.get("file", "") or suite.get("file", "")
                title = " > ".join(titles + [spec.get("title", "")])
                project = test.get("projectName", "")
                status = {"expected": PASSED, "unexpected": FAILED, "flaky": FLAKY}.get(test.get("status"), SKIPPED)
                detail = ""
                if status == FAILED:
                    errors = [result.get("error") or {} for result in test.get("results", [])]
                    detail = first_line(next((e.get("message") for e in errors if e.get("message")), None))
                elif status == SKIPPED:
                    detail = skip_reason(test)
                prefix = f"[{project}] " if project else ""
                yield Result(
                    f"playwright:{project}:{file}:{title}",
                    f"{prefix}{file}:{spec.get('line', '')} {title}",
                    file,
                    status,
                    detail,
                )
        for child in suite.get("suites", []):
            yield from walk(child, titles + [child.get("title", "")])

    for suite in report.get("suites", []):
        # the top suite is the file, whose title is its path
        yield from walk(suite, [])


def skip_reason(test: dict) -> str:
    """A Playwright test's skip reason: the description of its `skip` annotation."""
    annotations = list(test.get("annotations") or [])
    for result in test.get("results") or []:
        annotations.extend(result.get("annotations") or [])
    for annotation in annotations:
        if annotation.get("type") in ("skip", "fixme") and annotation.get("description"):
            return first_line(annotation["description"])
    return "skipped without a reason (test.skip() with no description)"


def read_report(path: Path) -> list[Result]:
    """The tests of one report, whichever runner wrote it (told apart by its content)."""
    if path.suffix == ".xml":
        return list(pytest_results(path))
    report = json.loads(path.read_text(encoding="utf-8"))
    if "numTotalTests" in report or "testResults" in report:
        return list(jest_results(report))
    if "suites" in report or "stats" in report:
        return list(playwright_results(report))
    raise ValueError(f"{path}: neither JUnit XML, jest JSON nor Playwright JSON")


def counts(results: list[Result]) -> dict[str, int]:
    found = {PASSED: 0, FAILED: 0, SKIPPED: 0}
    for result in results:
        found[PASSED if result.status == FLAKY else result.status] += 1
    return found


def merged(results: list[tuple[str, Result]]) -> dict[str, tuple[Result, list[tuple[str, Result]]]]:
    """Each test once: (its outcome over every step, what each step saw)."""
    by_key: dict[str, list[tuple[str, Result]]] = {}
    for step, result in results:
        by_key.setdefault(result.key, []).append((step, result))
    out = {}
    for key, seen in by_key.items():
        for status in (FAILED, FLAKY, PASSED, SKIPPED):
            chosen = next((r for _, r in seen if r.status == status), None)
            if chosen is not None:
                out[key] = (chosen, seen)
                break
    return out


# --- the steps -----------------------------------------------------------------------------

# Without steps.tsv: the suites test.sh ran before it kept one.
DEFAULT_STEPS = [
    ("pytest", "pytest.xml"),
    ("jest", "jest.json"),
    ("galata", "playwright.json"),
    ("galata (cgroup limit)", "playwright-cgroup.json"),
    ("smoke journeys", "smoke-journeys.json"),
]


def read_steps(results: Path) -> list[Step] | None:
    path = results / "steps.tsv"
    if not path.exists():
        return None
    steps = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        name, status, seconds, *rest = line.split("\t")
        steps.append(Step(name, int(status), int(seconds), (rest[0] if rest else "").split()))
    return steps


def report_paths(results: Path, pattern: str) -> list[Path]:
    pattern = pattern if os.path.isabs(pattern) else str(results / pattern)
    return [Path(p) for p in sorted(glob.glob(pattern))]


def summary(results: Path, elapsed: float | None) -> str:
    out: list[str] = []
    steps = read_steps(results)
    all_results: list[tuple[str, Result]] = []
    if steps is None:
        # No record of the steps: one line per suite whose report is there.
        for name, file in DEFAULT_STEPS:
            path = results / file
            if not path.exists():
                out.append(f"{name}: no report")
                continue
            found = read_report(path)
            all_results.extend((name, r) for r in found)
            c = counts(found)
            out.append(f"{name}: {c[PASSED]} passed, {c[FAILED]} failed, {c[SKIPPED]} skipped")
    else:
        width = max([len(s.name) for s in steps] + [len("step")])
        out.append(f"{'step':<{width}}  {'outcome':<16} {'passed':>7} {'failed':>7} {'skipped':>8} {'time':>12}")
        for step in steps:
            outcome = "ok" if step.status == 0 else f"FAILED (exit {step.status})"
            row = f"{step.name:<{width}}  {outcome:<16}"
            paths = [p for pattern in step.reports for p in report_paths(results, pattern)]
            if step.reports and not paths:
                row += f" {'no report':>24}"
            elif paths:
                found: list[Result] = []
                for path in paths:
                    try:
                        found.extend(read_report(path))
                    except (ValueError, ElementTree.ParseError, json.JSONDecodeError) as exc:
                        out.append(f"{step.name}: unreadable report {path}: {exc}")
                all_results.extend((step.name, r) for r in found)
                c = counts(found)
                row += f" {c[PASSED]:>7} {c[FAILED]:>7} {c[SKIPPED]:>8}"
            else:
                row += " " * 25
            out.append(f"{row} {duration(step.seconds):>12}".rstrip())
        if elapsed is not None:
            out.append(f"{'total time':<{width}}  {'':<16} {'':>25} {duration(elapsed):>12}")

    tests = merged(all_results)
    total = counts([outcome for outcome, _ in tests.values()])
    in_several = sum(1 for _, seen in tests.values() if len({step for step, _ in seen}) > 1)
    if in_several:
        out.append(f"(each test counted once: {in_several} ran in more than one step)")
    # The plain closing line ("all: N passed, N failed, N skipped"), alone on its line.
    out.append(f"all: {total[PASSED]} passed, {total[FAILED]} failed, {total[SKIPPED]} skipped")

    out.extend(skip_lines(tests))

    failed = [(seen, outcome) for outcome, seen in tests.values() if outcome.status == FAILED]
    flaky = [(seen, outcome) for outcome, seen in tests.values() if outcome.status == FLAKY]
    if failed:
        out.append("\nFailed tests:")
        for seen, outcome in failed:
            step = next(step for step, r in seen if r is outcome)
            out.append(f"  {step}: {outcome.name}\n      {outcome.detail}")
    if flaky:
        out.append("\nPassed only on a retry (flaky):")
        for seen, outcome in flaky:
            step = next(step for step, r in seen if r is outcome)
            out.append(f"  {step}: {outcome.name}")
    return "\n".join(out)


def skip_lines(tests: dict[str, tuple[Result, list[tuple[str, Result]]]]) -> list[str]:
    """The skipped tests, once per reason (a reason per step where steps gave different ones)."""
    groups: dict[tuple[tuple[str, str], ...], list[Result]] = {}
    for outcome, seen in tests.values():
        if outcome.status != SKIPPED:
            continue
        reasons = tuple(sorted({(step, r.detail) for step, r in seen}))
        groups.setdefault(reasons, []).append(outcome)
    if not groups:
        return []
    lines = ["\nSkipped, by reason:"]
    for reasons, skipped in sorted(groups.items(), key=lambda item: -len(item[1])):
        texts = sorted({reason for _, reason in reasons})
        steps = sorted({step for step, _ in reasons})
        where = where_text(skipped)
        if len(texts) == 1:
            lines.append(f"  {len(skipped)} ({', '.join(steps)}; {where}): {texts[0]}")
        else:
            lines.append(f"  {len(skipped)} ({where}):")
            lines.extend(f"      {step}: {reason}" for step, reason in reasons)
    return lines


def where_text(skipped: list[Result]) -> str:
    """Which tests: their names when few, else their files."""
    if len(skipped) <= 3:
        return ", ".join(r.name for r in skipped)
    files = sorted({r.location for r in skipped})
    if len(files) <= 3:
        return ", ".join(files)
    folder = os.path.commonpath(files) if all(f.startswith("/") == files[0].startswith("/") for f in files) else ""
    return f"{len(files)} files" + (f" in {folder}/" if folder else "")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", nargs="?", default="build/test-results", type=Path)
    parser.add_argument("--elapsed", type=float, help="the whole run's time in seconds")
    args = parser.parse_args(argv)
    print(summary(args.results, args.elapsed))
    return 0


if __name__ == "__main__":
    sys.exit(main())
