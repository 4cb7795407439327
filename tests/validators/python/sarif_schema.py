"""Validates SARIF files against the official SARIF 2.1.0 JSON schema (tests/schemas/) with the
jsonschema package's Draft 7 validator, and prints every violation.

Usage: python sarif_schema.py SCHEMA FILE...   (exit 1 when a file is invalid)
"""
import json
import sys

from jsonschema import Draft7Validator

schema = json.load(open(sys.argv[1], encoding="utf-8"))
Draft7Validator.check_schema(schema)
validator = Draft7Validator(schema)
bad = 0
for path in sys.argv[2:]:
    with open(path, encoding="utf-8") as f:
        log = json.load(f)
    for error in validator.iter_errors(log):
        bad += 1
        where = "/".join(str(p) for p in error.absolute_path)
        print(f"{path}: {where}: {error.message}")
print(f"checked {len(sys.argv) - 2} files, {bad} violations")
sys.exit(1 if bad else 0)
