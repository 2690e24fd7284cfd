"""Checks HAR files against HAR 1.2 (har-1.2.schema.json beside this script) with the
independent `jsonschema` package (Debian python3-jsonschema), and that every base64 body
decodes. Usage: har_check.py FILE...; prints the first problems and exits 1, or exits 0."""
import base64
import json
import os
import sys

import jsonschema

schema = json.load(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "har-1.2.schema.json")))
validator = jsonschema.Draft7Validator(schema)
bad = 0
for path in sys.argv[1:]:
    har = json.load(open(path, encoding="utf-8"))
    for error in list(validator.iter_errors(har))[:5]:
        bad += 1
        print(f"{path}: {'/'.join(map(str, error.absolute_path))}: {error.message}")
    for k, entry in enumerate(har.get("log", {}).get("entries", [])):
        content = entry.get("response", {}).get("content", {})
        if content.get("encoding") == "base64":
            try:
                base64.b64decode(content.get("text", ""), validate=True)
            except Exception as e:
                bad += 1
                print(f"{path}: entry {k}: content.text is not base64: {e}")
    print(f"{path}: {len(har.get('log', {}).get('entries', []))} entries checked")
sys.exit(1 if bad else 0)
