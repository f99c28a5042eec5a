#===- edit_json.py - Edit a JSON file in place for the lit tests ------------===#
#
# Sets or removes keys of a JSON object (a manifest.json, a model spec) to
# craft the files mixc and mix-run must reject. Dotted keys reach into
# nested objects, and numbers into arrays (params.0.shape).
#
#===----------------------------------------------------------------------===#
"""Usage: edit_json.py FILE EDIT...
  KEY=JSON   set KEY to the JSON value (a.b=3 sets b inside a)
  -KEY       remove KEY"""
import json
import sys


def main(argv):
    path = argv[1]
    with open(path) as f:
        root = json.load(f)
    for edit in argv[2:]:
        remove = edit.startswith("-")
        key, _, value = edit.lstrip("-").partition("=")
        *parents, last = key.split(".")
        obj = root
        for parent in parents:
            obj = obj[int(parent) if isinstance(obj, list) else parent]
        if isinstance(obj, list):
            last = int(last)
        if remove:
            del obj[last]
        else:
            obj[last] = json.loads(value)
    with open(path, "w") as f:
        json.dump(root, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main(sys.argv)
