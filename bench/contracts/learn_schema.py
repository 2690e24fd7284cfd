"""A full JSON Schema of a JSON document, for bench/contracts.sh: every object's members
with their schemas, `required` = the members every object at that place has, the JSON
types seen (null included), array items merged, `additionalProperties: false`.
  python3 bench/contracts/learn_schema.py twitter.json > twitter.schema.json"""
import json
import sys


def kind(value):
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def learn(values):
    types = sorted({kind(v) for v in values})
    if "integer" in types and "number" in types:
        types.remove("integer")
    schema = {"type": types[0] if len(types) == 1 else types}
    objects = [v for v in values if isinstance(v, dict)]
    if objects:
        names = sorted({k for o in objects for k in o})
        schema["properties"] = {n: learn([o[n] for o in objects if n in o]) for n in names}
        schema["required"] = [n for n in names if all(n in o for o in objects)]
        schema["additionalProperties"] = False
    arrays = [v for v in values if isinstance(v, list)]
    items = [i for a in arrays for i in a]
    if items:
        schema["items"] = learn(items)
    strings = [v for v in values if isinstance(v, str)]
    if strings:
        schema["maxLength"] = 100000
    return schema


with open(sys.argv[1], encoding="utf-8") as f:
    document = json.load(f)
json.dump({"$schema": "https://json-schema.org/draft/2020-12/schema", **learn([document])}, sys.stdout)
