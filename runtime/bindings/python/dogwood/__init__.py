"""dogwood - Python bindings of libdogwood, the embedded Dogwood policy engine.

    import dogwood
    with dogwood.Engine("policy.dw", schema="box") as e:
        v = e.decide({"action": "fs:read", "kind": "request",
                      "input": {"path": "~/project/a.c", "operation": "read_content"}})
        v.allow, v.cause, v.rules      # True, "permitted", ["project_read"]

ctypes over libdogwood.so (no build step); DOGWOOD_LIB names the library
file when it is not on the loader's path.  An Engine may be used from many
threads at once (the C engine holds one lock); close() it once, last.
dogwood.client.Client speaks to the dwd decision service instead.
"""
import ctypes
import json
import os
from dataclasses import dataclass
from typing import List, Optional, Union

from . import _native
from ._native import TS_NOW

__all__ = ["Engine", "Verdict", "Recovery", "ReloadResult", "DogwoodError", "version", "TS_NOW"]


class DogwoodError(Exception):
    """A call that did not do its job: the message is the library's."""


def version() -> str:
    """The loaded library's release (dw_version)."""
    return _native.lib().dw_version().decode()


@dataclass
class Verdict:
    allow: bool
    cause: str                       # permitted, forbidden, no_match, internal_fault
    rules: List[str]                 # determining rules: @id, else policy_<i>
    decided: bool = True             # False: the event's kind is not a decision kind
    errors: int = 0                  # erroring policies (Box denies on any)
    timestamp: int = 0               # ticks the engine gave the event
    message: str = ""                # why, for internal faults


@dataclass
class Recovery:
    events: int
    replayed: int
    checkpoint: bool
    retained: int
    note: str = ""


@dataclass
class ReloadResult:
    leaves: int
    kept: int
    fresh: int
    generation: int


def _encode(event: Union[dict, str, bytes]) -> bytes:
    if isinstance(event, dict):
        return json.dumps(event, separators=(",", ":")).encode()
    if isinstance(event, str):
        return event.encode()
    return bytes(event)


def _ts(ts: Optional[int]) -> int:
    return TS_NOW if ts is None else int(ts)


class Engine:
    """One policy set, its schemas and its event history.

    policy: a .dw source or .dwb artifact.  schema: a Cedar schema file or
    "box".  temporal_work_bound: steps of temporal evaluation per decision
    (0: the library's default).  no_request_validation: take requests as
    given, unchecked against the schema (the reference's behaviour).
    providers: a provider declaration file (dogwood.md §13.2); no_providers
    refuses any set that calls a provider (§13.6).  state_dir opens a durable engine (dw_engine_open_durable): the
    history is logged there and recovered on the next open; self.recovery
    says what the open found.
    """

    def __init__(self, policy, schema: Optional[str] = None, events: Optional[str] = None, *,
                 ticks_per_second: int = 0, replay_timestamps: bool = False, temporal_work_bound: int = 0,
                 no_request_validation: bool = False, providers: Optional[str] = None, no_providers: bool = False,
                 state_dir=None, durability: str = "full", checkpoint_every: int = 0,
                 checkpoint_interval_ms: int = 0):
        self._lib = _native.lib()
        self._callbacks = {}      # name -> the ctypes callback, kept alive while registered
        self._keep = [os.fsencode(policy), schema and os.fsencode(schema), events and os.fsencode(events),
                      providers and os.fsencode(providers)]
        cfg = _native.EngineConfig(self._keep[0], self._keep[1], self._keep[2], ticks_per_second, replay_timestamps,
                                   temporal_work_bound, no_request_validation, self._keep[3], no_providers)
        err = ctypes.create_string_buffer(1024)
        self.recovery = None
        if state_dir is None:
            h = self._lib.dw_engine_open(ctypes.byref(cfg), err, len(err))
        else:
            if durability not in _native.DURABILITY:
                raise ValueError("durability must be full, batch or none")
            d = _native.EngineDurable(os.fsencode(state_dir), _native.DURABILITY[durability],
                                      checkpoint_every, checkpoint_interval_ms, None)
            rec = _native.EngineRecovery()
            h = self._lib.dw_engine_open_durable(ctypes.byref(cfg), ctypes.byref(d), ctypes.byref(rec), err, len(err))
            if h:
                self.recovery = Recovery(rec.events, rec.replayed, rec.checkpoint, rec.retained, rec.note.decode())
        if not h:
            raise DogwoodError(err.value.decode(errors="replace"))
        self._h = ctypes.c_void_p(h)

    # -- lifetime --
    def close(self) -> None:
        if getattr(self, "_h", None):
            self._lib.dw_engine_close(self._h)
            self._h = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()

    def _handle(self):
        if not self._h:
            raise DogwoodError("the engine is closed")
        return self._h

    # -- information providers (dogwood.md §13.5) --
    def register_provider(self, name: str, fn) -> None:
        """Implement provider `name` ("Ns::Fn", or "Ns::Fn.m" for an output
        method) with fn(name, args) -> result: args is the list of resolved
        arguments in Cedar's JSON value form (None for an unresolvable one),
        the result is JSON-serialisable and must conform to the declared
        output type.  An exception is a provider error: the decision denies.
        fn must be pure; it runs under the engine's lock.  fn None
        unregisters."""
        def call(_ud, cname, args, args_len, out, outcap):
            try:
                res = json.dumps(fn(cname.decode(), json.loads(args[:args_len])),
                                 separators=(",", ":")).encode()
            except Exception as exc:  # the provider's error: a deny, its message in the verdict
                msg = ("%s: %s" % (type(exc).__name__, exc)).encode(errors="replace")[: max(outcap - 1, 0)]
                ctypes.memmove(out, msg + b"\0", len(msg) + 1)
                return -1
            if len(res) < outcap:
                ctypes.memmove(out, res, len(res))
            return len(res)      # >= outcap: the engine asks again with a larger buffer
        cb = _native.PROVIDER_FN(call) if fn is not None else ctypes.cast(None, _native.PROVIDER_FN)
        if self._lib.dw_engine_register_provider(self._handle(), name.encode(), cb, None):
            raise DogwoodError("cannot register provider %r" % name)
        if fn is None:
            self._callbacks.pop(name, None)
        else:
            self._callbacks[name] = cb

    # -- decisions --
    def _verdict(self, raw: _native.RawVerdict) -> Verdict:
        h = self._handle()
        rules = [self._lib.dw_engine_rule_name(h, raw.determining[i]).decode()
                 for i in range(min(raw.ndetermining, _native.MAX_RULES))]
        return Verdict(allow=bool(raw.allow), cause=self._lib.dw_cause_name(raw.cause).decode(), rules=rules,
                       decided=bool(raw.decided), errors=raw.nerrors, timestamp=raw.timestamp,
                       message=raw.message.decode(errors="replace"))

    def decide(self, event: Union[dict, str, bytes], ts: Optional[int] = None) -> Verdict:
        """Decide one event in Box's JSON form (a dict or JSON text)."""
        data = _encode(event)
        raw = _native.RawVerdict()
        if self._lib.dw_engine_decide_json(self._handle(), data, len(data), _ts(ts), ctypes.byref(raw)) != 0:
            raise DogwoodError("the engine is unusable")
        return self._verdict(raw)

    def decide_request(self, request: Union[dict, str, bytes], ts: Optional[int] = None) -> Verdict:
        """Decide a Cedar-shaped request {principal, action, resource, context}."""
        data = _encode(request)
        raw = _native.RawVerdict()
        if self._lib.dw_engine_decide_request_json(self._handle(), data, len(data), _ts(ts), ctypes.byref(raw)) != 0:
            raise DogwoodError("the engine is unusable")
        return self._verdict(raw)

    def record(self, event: Union[dict, str, bytes], ts: Optional[int] = None) -> None:
        """Append a ::response / ::error event (after the effect happened)."""
        data = _encode(event)
        err = ctypes.create_string_buffer(512)
        if self._lib.dw_engine_record_json(self._handle(), data, len(data), _ts(ts), err, len(err)) != 0:
            raise DogwoodError(err.value.decode(errors="replace"))

    # -- policy and state --
    def reload(self, artifact: Union[bytes, str, os.PathLike]) -> ReloadResult:
        """Swap in a compiled artifact (.dwb bytes, or a path to one)."""
        if not isinstance(artifact, (bytes, bytearray)):
            with open(artifact, "rb") as f:
                artifact = f.read()
        info = _native.ReloadInfo()
        err = ctypes.create_string_buffer(512)
        if self._lib.dw_engine_reload(self._handle(), bytes(artifact), len(artifact), ctypes.byref(info),
                                      err, len(err)) != 0:
            raise DogwoodError(err.value.decode(errors="replace"))
        return ReloadResult(info.leaves, info.kept, info.fresh, info.generation)

    def reset_history(self) -> None:
        self._lib.dw_engine_reset_history(self._handle())

    def checkpoint(self) -> None:
        if self._lib.dw_engine_checkpoint(self._handle()) != 0:
            raise DogwoodError("checkpoint failed: " + self.stats()["checkpoint_error"])

    def export_state(self) -> bytes:
        p, n = ctypes.c_void_p(), ctypes.c_size_t()
        if self._lib.dw_engine_export_state(self._handle(), ctypes.byref(p), ctypes.byref(n)) != 0:
            raise DogwoodError("cannot export the state")
        try:
            return ctypes.string_at(p, n.value)
        finally:
            self._lib.dw_free(p)

    def import_state(self, state: bytes) -> None:
        err = ctypes.create_string_buffer(512)
        if self._lib.dw_engine_import_state(self._handle(), state, len(state), err, len(err)) != 0:
            raise DogwoodError(err.value.decode(errors="replace"))

    def rule_description(self, rule: int) -> str:
        buf = ctypes.create_string_buffer(4096)
        self._lib.dw_engine_rule_description(self._handle(), rule, buf, len(buf))
        return buf.value.decode(errors="replace")

    @property
    def history_length(self) -> int:
        return self._lib.dw_engine_history_length(self._handle())

    def stats(self) -> dict:
        st = _native.EngineStats()
        self._lib.dw_engine_get_stats(self._handle(), ctypes.byref(st))
        out = {name: getattr(st, name) for name, _ in _native.EngineStats._fields_}
        out["checkpoint_error"] = st.checkpoint_error.decode(errors="replace")
        return out
