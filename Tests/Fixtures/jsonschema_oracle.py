"""The independent validator for ContractsTests: Python's jsonschema (Debian's
python3-jsonschema), draft 2020-12. Reads JSON lines {"schema", "instance"} from the file
named by argv[1] and prints one line per pair: 1 valid, 0 invalid, or E and the exception
when jsonschema itself failed on the pair."""
import json
import sys

from jsonschema import Draft202012Validator

with open(sys.argv[1], encoding="utf-8") as pairs:
    for line in pairs:
        pair = json.loads(line)
        try:
            print(1 if Draft202012Validator(pair["schema"]).is_valid(pair["instance"]) else 0)
        except Exception as error:  # noqa: BLE001 - any refusal is reported as such
            print("E", type(error).__name__, str(error).replace("\n", " ")[:200])
