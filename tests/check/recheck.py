#!/usr/bin/env python3
"""Re-run every counterexample of `dwc check --format json` (stdin) through
`dwc authorize -v` and check that the decision shows the finding.
usage: recheck.py DWC POLICY CHECK-ARGS...   prints the number re-run; exit 1 on a disagreement."""
import json, os, subprocess, sys, tempfile

dwc, policy, args = sys.argv[1], sys.argv[2], sys.argv[3:]
def opt(names):
    for i, a in enumerate(args):
        for n in names:
            if a == n and i + 1 < len(args): return args[i + 1]
            if a.startswith(n + "="): return a[len(n) + 1:]
    return None
schema, events = opt(["-s", "--schema"]), opt(["--events"])
against, asserts, macros = opt(["--against"]), opt(["--assert"]), opt(["--macros"])
providers = opt(["--providers"])
raw = sys.stdin.read()
if not raw.strip():        # check refused its arguments (a usage-error case): nothing to re-run
    print(0); sys.exit(0)
data = json.loads(raw)

def authorize(pol, cex):
    with tempfile.TemporaryDirectory() as d:
        rq, en = os.path.join(d, "r.json"), os.path.join(d, "e.json")
        json.dump(cex["request"], open(rq, "w"))
        json.dump(cex["entities"], open(en, "w"))
        cmd = [dwc, "authorize", "-p", pol, "-s", schema, "--entities", en, "--request-json", rq, "-v"]
        if events: cmd += ["--events", events]
        if macros: cmd += ["--macros", macros]   # the same library check expanded with
        if providers: cmd += ["--providers", providers]   # and the same declarations
        out = subprocess.run(cmd, capture_output=True, text=True).stdout.split("\n")
    allow = out[0] == "ALLOW"
    det = out[1].split(": ", 1)[1].split(",") if len(out) > 1 and ": " in out[1] else []
    errs = [w for w in (out[2].split()[1:] if len(out) > 2 else []) if w.startswith("policy")]
    return allow, [d for d in det if d], errs

n, bad = 0, []
for f in data["findings"]:
    cex = f.get("counterexample")
    # a claim that rests on temporal leaf values cannot be re-run without a
    # history: leaves true in the set's cex, or (a diff) leaves of either
    # version that the other lacks, whose values the message gives
    if not cex or "temporal_leaves" in cex or "temporal leaves in only one version" in f["message"]: continue
    kind, me = f["kind"], "policy%d" % f.get("policy_index", -1)
    if kind == "diff":
        a1, _, _ = authorize(policy, cex)
        a2, _, _ = authorize(against, cex)
        ok = (a1, a2) == ((True, False) if "more permissive" in f["message"] else (False, True))
    elif kind == "assertion-refuted":
        a1, _, _ = authorize(policy, cex)
        a2, det, _ = authorize(asserts, cex)
        ok = a1 and me in det
    else:
        allow, det, errs = authorize(policy, cex)
        ok = {"forbid-may-error": lambda: me in errs,
              "permit-overridden": lambda: not allow,
              "permit-shadowed": lambda: allow and me in det and len(det) >= 2,
              "forbid-shadowed": lambda: not allow and me in det and len(det) >= 2,
              "redundant": lambda: me in det and len(det) >= 2}.get(kind, lambda: True)()
    n += 1
    if not ok: bad.append("%s %s: the VM disagrees" % (kind, me))
print(n)
for b in bad: print(b)
sys.exit(1 if bad else 0)
