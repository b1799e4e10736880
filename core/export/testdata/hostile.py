"""Imports pipeplan's Python exports (against readback.py's stand-ins for the frameworks)
and reports what each defines, for core/export's hostile-input tests.

A name that broke out of its string literal or comment would show as a name the export
does not define, a value that differs from the input, or a file the payload wrote (the
test looks for it after this script ends). Strings are reported as the hex of their
bytes, with surrogateescape, so that a name that was not UTF-8 is compared byte for byte.

usage: python3 hostile.py MANIFEST.json  ->  JSON on stdout
MANIFEST: [{"format": "pytorch"|"deepspeed"|"graphcore", "path": FILE}, ...]
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import readback  # noqa: E402  (the stand-ins)


def hexes(names):
    return [n.encode("utf-8", "surrogateescape").hex() for n in names]


def main():
    readback.install_torch()
    readback.install_deepspeed()
    out = []
    for i, job in enumerate(json.load(open(sys.argv[1]))):
        res = {"format": job["format"]}
        try:
            mod = readback.load(job["path"], "hostile%d" % i)
        except BaseException as e:  # a SyntaxError is a finding, not a crash of this script
            res["error"] = "%s: %s" % (type(e).__name__, e)
            out.append(res)
            continue
        res["defines"] = sorted(k for k in vars(mod) if not k.startswith("__"))
        if job["format"] == "pytorch" and hasattr(mod, "CUT_TENSORS"):  # a graph split
            res["names"] = hexes(t[0] for cut in mod.CUT_TENSORS for t in cut)
            res["modules"] = hexes(m for stage in mod.STAGE_MODULES for m in stage)
        elif job["format"] == "pytorch":
            res["names"] = hexes(mod.SPLIT_SPEC.keys())
            res["modules"] = hexes(m for stage in mod.STAGE_MODULES for m in stage)
        elif job["format"] == "deepspeed":
            res["names"] = hexes(mod.LAYER_NAMES)
        elif job["format"] == "graphcore":
            res["names"] = hexes(mod.STAGE_OF.keys())
        out.append(res)
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
