#!/usr/bin/env python3
"""`dwc dogwood lower`'s output is plain Cedar that compiles and decides as the set it was lowered
from (dogwood.md §14, §20 D4: its hoisted names are context attributes like any other, since it
hoists nothing itself).  For each Box example with a trace, and tests/dogwood_ref/lower_decide/:
the set is lowered against Box's schemas, `dwc compile` compiles the lowered policies against the
augmented schema, and each decision line of the trace is explained by the stateful engine
(`dwc explain --line N --format json`: its verdict, determining rules and each temporal leaf's
value) and decided again by `dwc authorize -v` on the lowered set, with the leaf values under
their hoisted names (`temporal_fields`) and Box's principal and resource (box.md §15.2).
The verdict and the determining rules must be the same.
usage: lower_decide.py DWC SHARED    last line: `N passed, N failed`."""
import glob, json, os, subprocess, sys, tempfile

dwc, shared = sys.argv[1], sys.argv[2]
here = os.path.dirname(os.path.abspath(__file__))
box_schema = os.path.join(here, "..", "..", "lang", "box_actions.cedarschema")
sets = sorted(glob.glob(os.path.join(shared, "examples", "box", "*", "trace.jsonl")))
sets.append(os.path.join(here, "lower_decide", "trace.jsonl"))
passed = failed = 0


def bad(why):
    global failed
    failed += 1
    print("FAIL " + why)


def run(args):
    return subprocess.run([dwc] + args, capture_output=True, text=True)


work = tempfile.mkdtemp(prefix="dw-lower-decide-")
for trace in sets:
    d = os.path.dirname(trace)
    name, policy = os.path.basename(d), os.path.join(d, "policy.dw")
    r = run(["dogwood", "lower", policy, "--policy-schema", box_schema, "--event-schema", "box", "--format", "json"])
    if r.returncode != 0:
        bad("%s: dwc dogwood lower: %s" % (name, r.stderr.strip()[:200]))
        continue
    low = json.loads(r.stdout)
    lp, ls = os.path.join(work, name + ".cedar"), os.path.join(work, name + ".cedarschema")
    open(lp, "w").write(low["cedar_policies"])
    open(ls, "w").write(low["cedar_schema"])
    # the lowered set compiles as plain Cedar (before: "reserved attribute" at each hoisted read)
    c = run(["compile", lp, "-s", ls, "-o", os.path.join(work, name + ".dwb")])
    if c.returncode != 0:
        bad("%s: dwc compile of the lowered set: %s" % (name, (c.stdout + c.stderr).strip().split("\n")[0]))
        continue
    passed += 1
    fields = low["temporal_fields"]
    if low.get("provider_fields"):
        bad("%s: provider fields are not covered by this test" % name)
        continue
    for n, line in enumerate(open(trace), 1):
        ev = json.loads(line)
        if ev.get("kind") != "request":
            continue
        x = run(["explain", "-p", policy, "--schema", "box", "--trace", trace, "--line", str(n), "--format", "json"])
        if x.returncode != 0:
            bad("%s line %d: dwc explain: %s" % (name, n, (x.stdout + x.stderr).strip()[:200]))
            continue
        xj = json.loads(x.stdout)
        if xj["refused_before_policies"]:
            continue   # Box's request gate, not the policies: nothing for the lowered set to decide
        ctx = {"input": ev["input"]}
        for p in xj["policies"]:
            for lf in p["leaves"]:
                used = lf["decision_used"]
                val = used if used is not None else lf["value"] == "true"
                if lf["value"] not in ("true", "false"):
                    bad("%s line %d: leaf %d is %s" % (name, n, lf["leaf"], lf["value"]))
                ctx[fields[lf["leaf"]]] = bool(val)
        req = {"principal": {"type": "Box::Agent", "id": "self"}, "action": {"type": "Box::Action", "id": ev["action"]},
               "resource": {"type": "Box::Resource", "id": "unused"}, "context": ctx}
        rq = os.path.join(work, "request.json")
        json.dump(req, open(rq, "w"))
        a = run(["authorize", "-p", lp, "-s", ls, "--request-json", rq, "-v"])
        out = a.stdout.split("\n")
        if a.returncode not in (0, 2) or out[0] not in ("ALLOW", "DENY"):
            bad("%s line %d: dwc authorize on the lowered set: %s" % (name, n, (a.stdout + a.stderr).strip()[:300]))
            continue
        det = [w for w in (out[1].split(": ", 1)[1].split(",") if len(out) > 1 and ": " in out[1] else []) if w]
        want_det = ["policy%d" % i for i, p in enumerate(xj["policies"]) if p["determining"]]
        verdict = out[0].lower()
        if verdict != xj["verdict"] or sorted(det) != sorted(want_det):
            bad("%s line %d: the lowered set decides %s %s, the set %s %s" % (name, n, verdict, det, xj["verdict"], want_det))
        else:
            passed += 1
for f in glob.glob(os.path.join(work, "*")):
    os.remove(f)
os.rmdir(work)
print("%d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
