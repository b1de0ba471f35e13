"""Tests of the Python bindings (run by tests/lib/run.sh, offline).

Environment: DOGWOOD_LIB (the installed libdogwood.so.N), DW_EXAMPLES (Box's
example bundles), DW_VERDICTS_OUT (where the verdict lines go, compared with
the C API's by run.sh), DW_ABI_SIZES ("name=size ..." from the C compiler),
DWC and DWD (binaries, for artifacts and the dwd client).
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import dogwood  # noqa: E402
from dogwood import _native  # noqa: E402
from dogwood.client import Client  # noqa: E402

EXAMPLES = os.environ.get("DW_EXAMPLES", "")
DWC = os.environ.get("DWC", "")
DWD = os.environ.get("DWD", "")


def verdict_line(where, v):
    return "%s %s %s [%s]" % (where, "ALLOW" if v.allow else "DENY", v.cause, ",".join(v.rules))


def bundles():
    return sorted(b for b in os.listdir(EXAMPLES) if os.path.isdir(os.path.join(EXAMPLES, b)))


def feed(engine, bundle, name, lines, first=1, problems=None):
    """Feed lines (numbered from first) as the C test does; returns verdict lines."""
    out = []
    for n, line in enumerate(lines, first):
        if not line.strip():
            continue
        ev = json.loads(line)
        if name == "requests.jsonl":
            engine.reset_history()
            v = engine.decide_request(line)
        elif "expect" in ev or ev.get("kind") == "request":
            v = engine.decide(ev)
        else:
            engine.record(line)
            continue
        out.append(verdict_line("%s/%s:%d" % (bundle, name, n), v))
        if "expect" in ev and problems is not None:
            ok = (ev["expect"] == "allow") == v.allow
            ok = ok and ("rules" not in ev or ev["rules"] == v.rules)
            ok = ok and ("cause" not in ev or ev["cause"] == v.cause)
            if not ok:
                problems.append("%s/%s:%d: expected %s, got %s" % (bundle, name, n, ev["expect"], out[-1]))
    return out


def read_lines(path):
    with open(path) as f:
        return f.read().split("\n")


@unittest.skipUnless(EXAMPLES, "DW_EXAMPLES is not set")
class BoxExamples(unittest.TestCase):
    def test_examples_decide_as_expected(self):
        lines, problems = [], []
        for b in bundles():
            policy = os.path.join(EXAMPLES, b, "policy.dw")
            for name in ("requests.jsonl", "trace.jsonl"):
                path = os.path.join(EXAMPLES, b, name)
                if not os.path.exists(path):
                    continue
                with dogwood.Engine(policy, schema="box", replay_timestamps=name == "trace.jsonl") as e:
                    lines += feed(e, b, name, read_lines(path), problems=problems)
        self.assertEqual(problems, [])
        self.assertGreater(len(lines), 50)
        if os.environ.get("DW_VERDICTS_OUT"):
            with open(os.environ["DW_VERDICTS_OUT"], "w") as f:
                f.write("".join(l + "\n" for l in lines))

    def trace_of(self, bundle):
        return os.path.join(EXAMPLES, bundle, "policy.dw"), read_lines(os.path.join(EXAMPLES, bundle, "trace.jsonl"))

    def test_durable_engine_recovers_its_history(self):
        policy, lines = self.trace_of("06-http-request-budget")
        with dogwood.Engine(policy, schema="box", replay_timestamps=True) as e:
            want = feed(e, "b", "trace.jsonl", lines)
        half = len(lines) // 2
        state = tempfile.mkdtemp(prefix="dw-py-state-")
        try:
            with dogwood.Engine(policy, schema="box", replay_timestamps=True, state_dir=state) as e:
                self.assertEqual(e.recovery.events, 0)
                got = feed(e, "b", "trace.jsonl", lines[:half])
            with dogwood.Engine(policy, schema="box", replay_timestamps=True, state_dir=state, durability="batch") as e:
                self.assertGreater(e.recovery.events, 0)
                self.assertTrue(e.stats()["durable"])
                got += feed(e, "b", "trace.jsonl", lines[half:], first=half + 1)
        finally:
            shutil.rmtree(state)
        self.assertEqual(got, want)

    def test_state_export_import(self):
        policy, lines = self.trace_of("06-http-request-budget")
        half = len(lines) // 2
        with dogwood.Engine(policy, schema="box", replay_timestamps=True) as e:
            want = feed(e, "b", "trace.jsonl", lines)
        with dogwood.Engine(policy, schema="box", replay_timestamps=True) as a, \
                dogwood.Engine(policy, schema="box", replay_timestamps=True) as b:
            got = feed(a, "b", "trace.jsonl", lines[:half])
            b.import_state(a.export_state())
            got += feed(b, "b", "trace.jsonl", lines[half:], first=half + 1)
        self.assertEqual(got, want)

    @unittest.skipUnless(DWC, "DWC is not set")
    def test_reload_swaps_the_policy(self):
        tmp = tempfile.mkdtemp(prefix="dw-py-reload-")
        try:
            art = os.path.join(tmp, "02.dwb")
            subprocess.run([DWC, "compile", os.path.join(EXAMPLES, "02-no-deletes", "policy.dw"), "-s", "box",
                            "-o", art], check=True)
            reqs = [l for l in read_lines(os.path.join(EXAMPLES, "02-no-deletes", "requests.jsonl")) if l]
            with dogwood.Engine(os.path.join(EXAMPLES, "02-no-deletes", "policy.dw"), schema="box") as e:
                want = feed(e, "b", "requests.jsonl", reqs)
            with dogwood.Engine(os.path.join(EXAMPLES, "01-project-read", "policy.dw"), schema="box") as e:
                info = e.reload(art)
                self.assertEqual(info.generation, 1)
                self.assertEqual(feed(e, "b", "requests.jsonl", reqs), want)
                with self.assertRaises(dogwood.DogwoodError):
                    e.reload(b"not an artifact")
        finally:
            shutil.rmtree(tmp)

    def test_threads_share_one_engine(self):
        reqs = [l for l in read_lines(os.path.join(EXAMPLES, "01-project-read", "requests.jsonl")) if l]
        with dogwood.Engine(os.path.join(EXAMPLES, "01-project-read", "policy.dw"), schema="box") as e:
            want = [(v.allow, v.cause, v.rules) for v in map(e.decide_request, reqs)]
            results, errors = [], []

            def run():
                try:
                    for _ in range(20):
                        results.append([(v.allow, v.cause, v.rules) for v in map(e.decide_request, reqs)])
                except Exception as x:  # noqa: BLE001 - reported below
                    errors.append(x)
            ts = [threading.Thread(target=run) for _ in range(4)]
            for t in ts:
                t.start()
            for t in ts:
                t.join()
        self.assertEqual(errors, [])
        self.assertEqual(len(results), 80)
        self.assertTrue(all(r == want for r in results))


class Api(unittest.TestCase):
    def test_version(self):
        self.assertRegex(dogwood.version(), r"^\d+\.\d+\.\d+$")

    def test_abi_sizes_match_the_header(self):
        sizes = dict(kv.split("=") for kv in os.environ.get("DW_ABI_SIZES", "").split())
        if not sizes:
            self.skipTest("DW_ABI_SIZES is not set")
        for name, cls in _native.SIZES.items():
            self.assertEqual(int(sizes[name]), __import__("ctypes").sizeof(cls), name)

    def test_load_error_is_text(self):
        with tempfile.NamedTemporaryFile("w", suffix=".dw", delete=False) as f:
            f.write("permit(principal, action, resource)\n  when { context.input.path like };\n")
        try:
            with self.assertRaises(dogwood.DogwoodError) as cm:
                dogwood.Engine(f.name, schema="box")
            self.assertRegex(str(cm.exception), "^" + f.name + r":2:\d+: error: ")
        finally:
            os.unlink(f.name)

    @unittest.skipUnless(EXAMPLES, "DW_EXAMPLES is not set")
    def test_decide_takes_dict_or_json_and_gates(self):
        with dogwood.Engine(os.path.join(EXAMPLES, "01-project-read", "policy.dw"), schema="box") as e:
            ev = {"action": "fs:read", "kind": "request",
                  "input": {"path": "~/project/.env", "operation": "read_content"}}
            for form in (ev, json.dumps(ev), json.dumps(ev).encode()):
                v = e.decide(form)
                self.assertEqual((v.allow, v.cause, v.rules), (False, "forbidden", ["no_env"]))
            v = e.decide({"action": "fs:read", "kind": "request", "input": {"path": "~/project/a.c"}})
            self.assertEqual((v.allow, v.cause), (False, "internal_fault"))
            self.assertTrue(v.message)
            v = e.decide("{not json")
            self.assertEqual((v.allow, v.cause), (False, "internal_fault"))
        with self.assertRaises(dogwood.DogwoodError):
            e.decide(ev)


@unittest.skipUnless(EXAMPLES and DWD, "DW_EXAMPLES or DWD is not set")
class DwdClient(unittest.TestCase):
    def test_dwd_decides_as_the_engine(self):
        tmp = tempfile.mkdtemp(prefix="dw-py-dwd-")
        policy = os.path.join(EXAMPLES, "01-project-read", "policy.dw")
        sock = os.path.join(tmp, "s")
        p = subprocess.Popen([DWD, "--policy", policy, "--schema", "box", "--state", os.path.join(tmp, "st"),
                              "--socket", sock], stderr=subprocess.PIPE)
        try:
            for _ in range(600):
                if os.path.exists(sock) or p.poll() is not None:
                    break
                time.sleep(0.05)
            self.assertTrue(os.path.exists(sock), "dwd did not start")
            reqs = [json.loads(l) for l in read_lines(os.path.join(EXAMPLES, "01-project-read", "requests.jsonl")) if l]
            with dogwood.Engine(policy, schema="box") as e, Client(sock) as c:
                for r in reqs:
                    want = e.decide_request(r)
                    got = c.decide(r["action"]["id"], r["context"]["input"])
                    self.assertEqual((got.allow, got.cause, got.rules), (want.allow, want.cause, want.rules))
                    self.assertEqual(got.rule, want.rules[0] if want.rules else "<default-deny>")
                c.record("fs:read", "response", reqs[0]["context"]["input"], {})
                self.assertEqual(c.stats()["records"], 1)
        finally:
            p.send_signal(signal.SIGTERM)
            p.wait(timeout=60)
            p.stderr.close()
            shutil.rmtree(tmp)


PROVIDER_SCHEMA = """namespace App {
  entity User;
  entity Doc;
  action "Read" appliesTo { principal: [User], resource: [Doc], context: { input: { doc: String } } };
}
"""
PROVIDER_DECLS = {"availableProviders": {"Content::Filter": {
    "argumentTypes": [{"paramType": "string"}],
    "outputType": {"paramType": "record", "fields": {"flagged": {"paramType": "bool"},
                                                     "score": {"paramType": "decimal"}},
                   "required": ["flagged", "score"]}}}}
PROVIDER_POLICY = """forbid (principal, action, resource) when { Content::Filter(context.input.doc).flagged };
forbid (principal, action, resource) when { Content::Filter(context.input.doc).score.greaterThan(decimal("0.5")) };
permit (principal, action, resource) when { Strings::Matches(context.input.doc, "^[a-z ]+$").matched };
"""


def read_request(doc):
    return {"principal": {"type": "App::User", "id": "a"}, "action": {"type": "App::Action", "id": "Read"},
            "resource": {"type": "App::Doc", "id": "d"}, "context": {"input": {"doc": doc}}}


class Providers(unittest.TestCase):
    """A host callback in Python decides (dogwood.md §13.5); its error denies."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="dw-py-providers-")
        for name, text in (("s.cedarschema", PROVIDER_SCHEMA), ("providers.json", json.dumps(PROVIDER_DECLS)),
                           ("policy.dw", PROVIDER_POLICY)):
            with open(os.path.join(self.tmp, name), "w") as f:
                f.write(text)

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def engine(self, **kw):
        return dogwood.Engine(os.path.join(self.tmp, "policy.dw"), schema=os.path.join(self.tmp, "s.cedarschema"),
                              providers=os.path.join(self.tmp, "providers.json"), **kw)

    def test_callback_decides(self):
        seen = []

        def content_filter(name, args):
            seen.append((name, args))
            if args[0] == "boom":
                raise RuntimeError("filter service down")
            return {"flagged": "hate" in args[0], "score": {"__extn": {"fn": "decimal", "arg": "0.9" if "rude" in args[0] else "0.1"}}}

        with self.engine() as e:
            v = e.decide_request(json.dumps(read_request("hello")))
            self.assertEqual((v.allow, v.cause), (False, "internal_fault"))   # declared, not implemented yet
            e.register_provider("Content::Filter", content_filter)
            v = e.decide_request(json.dumps(read_request("hello")))
            self.assertEqual((v.allow, v.rules), (True, ["policy_2"]))
            self.assertEqual(seen[-1], ("Content::Filter", ["hello"]))
            v = e.decide_request(json.dumps(read_request("some hate")))
            self.assertEqual((v.allow, v.cause, v.rules), (False, "forbidden", ["policy_0"]))
            v = e.decide_request(json.dumps(read_request("rude")))
            self.assertEqual((v.allow, v.cause, v.rules), (False, "forbidden", ["policy_1"]))
            v = e.decide_request(json.dumps(read_request("boom")))
            self.assertEqual((v.allow, v.cause), (False, "internal_fault"))
            self.assertIn("filter service down", v.message)
            e.register_provider("Content::Filter", lambda name, args: {"flagged": False})   # not conforming
            v = e.decide_request(json.dumps(read_request("hello")))
            self.assertEqual((v.allow, v.cause), (False, "internal_fault"))
            self.assertIn("score", v.message)

    def test_switched_off(self):
        with self.assertRaises(dogwood.DogwoodError) as cm:
            self.engine(no_providers=True)
        self.assertIn("information providers are not enabled", str(cm.exception))


if __name__ == "__main__":
    unittest.main()
