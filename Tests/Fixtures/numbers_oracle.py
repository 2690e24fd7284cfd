"""output.numbers against an independent oracle, end to end through serializerd.

Usage: numbers_oracle.py PORT. The daemon has routes /keep/, /count/, /string/ and /reject/
(json), /pkeep/, /pcount/, /pstring/, /preject/ (plist) on the stub upstream; count must
write what keep writes. Numbers at the edges of what a
double holds go out as JSON, an XML plist and a binary plist; the oracle is Python's own:
a number is safe when the shortest repr of its nearest double is the same Decimal as its
text (decimal.Decimal, json with parse_int/parse_float). Prints one JSON summary line."""
import json, os, plistlib, sys, tempfile, urllib.request
from decimal import Decimal

port = int(sys.argv[1])


def numbers():
    out = []
    for base in (2**53, 2**63, 2**64, 10**15, 10**16, 10**17):
        for k in (-3, -2, -1, 0, 1, 2, 3):
            out.append(str(base + k))
            out.append("-" + str(base + k))
    out += ["0", "-0", "0.0", "1.10", "0.1", "1e23", "1e22", "9.999999999999999e22", "123456789012345.6",
            "1234567890123456.7", "0.30000000000000004", "0.3000000000000000444", "1e400", "-1e400", "2e-400",
            "5e-324", "4.9e-324", "2.4703282292062327e-324", "2.4703282292062328e-324", "1.7976931348623157e308",
            "1.7976931348623158e308", "1.7976931348623159e308", "2.2250738585072014e-308", "2.225073858507201e-308",
            "12345678901234567890", "1E+2", "1e-7", "100000000000000000000000", "3.141592653589793", "3.1415926535897932",
            "3.14159265358979323846", "-65.613616999999977", "43.420273000000009", "-65.613617", "0.000001", "1e-300",
            "1.5e-320", "9007199254740993.0", "9007199254740992.000", "4.35", "8.41", "2.675", "1e21", "123e-2"]
    for digits in range(14, 19):
        for k in range(4):
            out.append("1." + "2345678901234567890"[: digits - 1 - k] + str(k))
    return out[:200] if len(out) >= 200 else out + [str(10**n + 1) for n in range(14, 14 + 200 - len(out))]


def safe(text):
    value = float(text)
    if value in (float("inf"), float("-inf")):
        return False
    return Decimal(repr(value)) == Decimal(text)


def get(path):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=20) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def decoded(body):
    return json.loads(body, parse_int=Decimal, parse_float=Decimal)


nums = numbers()
expected = [safe(n) for n in nums]
summary = {"count": len(nums), "unsafe": expected.count(False), "mismatches": []}
tmp = tempfile.mkdtemp()
json_path = os.path.join(tmp, "n.json")
with open(json_path, "w") as f:
    f.write("[" + ",".join(nums) + "]")
# XML plist: integers as <integer>, the rest as <real>, as text (what an upstream writes).
xml_path = os.path.join(tmp, "n.plist")
with open(xml_path, "w") as f:
    items = "".join(f"<integer>{n}</integer>" if n.lstrip("-").isdigit() else f"<real>{n}</real>" for n in nums)
    f.write('<?xml version="1.0" encoding="UTF-8"?><!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" '
            '"http://www.apple.com/DTDs/PropertyList-1.0.dtd"><plist version="1.0"><array>' + items + "</array></plist>")
# Binary plist: what it can hold, integers of 64 bits (unsigned too) and doubles.
bin_nums = [n for n in nums if n.lstrip("-").isdigit() and -2**63 <= int(n) < 2**64]
bin_path = os.path.join(tmp, "n.bplist")
with open(bin_path, "wb") as f:
    f.write(plistlib.dumps([int(n) for n in bin_nums], fmt=plistlib.FMT_BINARY))

cases = [("/keep/", "/string/", "/reject/", json_path, "application/json", nums),
         ("/pkeep/", "/pstring/", "/preject/", xml_path, "application/x-plist", nums),
         ("/pkeep/", "/pstring/", "/preject/", bin_path, "application/x-plist", bin_nums)]
checked = 0
for keep, string, reject, path, ctype, texts in cases:
    want = [safe(n) for n in texts]
    q = f"file?path={path}&type={ctype}"
    status, body = get(keep + q)
    kept = decoded(body)
    status_c, body_c = get(keep.replace("keep", "count") + q)
    if (status_c, body_c) != (status, body):
        summary["mismatches"].append(f"{path}: count wrote {body_c[:120]!r} ({status_c}) where keep wrote {body[:120]!r} ({status})")
    status_s, body_s = get(string + q)
    strung = decoded(body_s)
    status_r, body_r = get(reject + q)
    for i, text in enumerate(texts):
        checked += 1
        # keep: the exact value; string: unsafe ones as strings of the exact text.
        if kept[i] != Decimal(text) and not (Decimal(text) == 0 and kept[i] == 0):
            summary["mismatches"].append(f"{path}: keep changed {text} to {kept[i]}")
        is_string = isinstance(strung[i], str)
        if is_string == want[i]:
            summary["mismatches"].append(f"{path}: {text} safe={want[i]} but string output gave {strung[i]!r}")
        if is_string and Decimal(strung[i]) != Decimal(text):
            summary["mismatches"].append(f"{path}: string output {strung[i]!r} is not the value of {text}")
    unsafe = want.count(False)
    if (status_r == 200) != (unsafe == 0):
        summary["mismatches"].append(f"{path}: reject answered {status_r} with {unsafe} unsafe numbers")
    if unsafe and b"urn:serializerd:serialization-failed" not in body_r:
        summary["mismatches"].append(f"{path}: reject body {body_r[:200]!r}")
    summary[os.path.basename(path)] = {"unsafe": unsafe, "keep": status, "string": status_s, "reject": status_r}
summary["checked"] = checked
print(json.dumps(summary))
