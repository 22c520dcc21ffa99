"""Validate SARIF logs against the vendored SARIF 2.1.0 schema.

Usage: python3 tests/sarif/validate.py FILE...
Exit 0 when every file is valid, 1 when one is not (errors on stderr), 3 when the
`jsonschema` package is not installed (tests/requirements.txt installs it).
"""

import json
import pathlib
import sys

try:
    import jsonschema
except ImportError:
    print("jsonschema is not installed: python3 -m pip install -r tests/requirements.txt", file=sys.stderr)
    sys.exit(3)

SCHEMA = pathlib.Path(__file__).with_name("sarif-schema-2.1.0.json")


def main(paths):
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    validator = jsonschema.Draft4Validator(schema)
    failed = False
    for path in paths:
        document = json.loads(pathlib.Path(path).read_text(encoding="utf-8"))
        for error in sorted(validator.iter_errors(document), key=lambda error: list(error.absolute_path)):
            failed = True
            print(f"{path}: {error.json_path}: {error.message}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
