"""Reads JUnit XML files with junitparser (a real consumer) and prints, as JSON, every suite's
declared counts next to the counts of its test cases, so tests/reports.rs can check both.

Usage: python junit_counts.py FILE...   (exit 1 with the reason when a file does not parse)
"""
import json
import sys

from junitparser import Error, Failure, JUnitXml, Skipped

out = {}
for path in sys.argv[1:]:
    try:
        xml = JUnitXml.fromfile(path)
    except Exception as e:  # noqa: BLE001 - any parse failure is the answer
        print(f"{path}: does not parse: {e}", file=sys.stderr)
        sys.exit(1)
    suites = []
    for suite in xml:
        cases = []
        for case in suite:
            results = case.result
            kind = "pass"
            detail = {}
            for r in results:
                if isinstance(r, Failure):
                    kind = "failure"
                elif isinstance(r, Error):
                    kind = "error"
                elif isinstance(r, Skipped):
                    kind = "skipped"
                detail = {"type": r.type, "message": r.message, "text": r.text}
            cases.append({"name": case.name, "classname": case.classname, "result": kind,
                          "time": case.time, **detail})
        suites.append({
            "name": suite.name,
            "declared": {"tests": suite.tests, "failures": suite.failures,
                         "errors": suite.errors, "skipped": suite.skipped},
            "counted": {"tests": len(cases),
                        "failures": sum(c["result"] == "failure" for c in cases),
                        "errors": sum(c["result"] == "error" for c in cases),
                        "skipped": sum(c["result"] == "skipped" for c in cases)},
            "system_err": "".join(e.text or "" for e in suite._elem.iter("system-err")),
            "cases": cases,
        })
    out[path] = suites
json.dump(out, sys.stdout, indent=1)
