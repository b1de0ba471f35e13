"""ctypes declarations of libdogwood's public API (runtime/dogwood.h).

The library is found through DOGWOOD_LIB (a path to libdogwood.so.N), else
the dynamic loader's search (libdogwood.so.1).  The structures mirror the
header's; tests/lib/run.sh checks their sizes against the C compiler's.
"""
import ctypes
import os

SONAME = "libdogwood.so.1"
MAX_RULES = 32

# DW_TS_NOW (dogwood.h): the ts meaning "the event's time member, else the
# clock"; every other value, 0 included, is a time in ticks.
TS_NOW = -(2 ** 63)

DURABILITY = {"full": 0, "batch": 1, "none": 2}


class EngineConfig(ctypes.Structure):
    _fields_ = [("policy_path", ctypes.c_char_p), ("schema_path", ctypes.c_char_p),
                ("events_path", ctypes.c_char_p), ("ticks_per_second", ctypes.c_int64),
                ("replay_timestamps", ctypes.c_bool), ("temporal_work_bound", ctypes.c_uint64),
                ("no_request_validation", ctypes.c_bool), ("providers_path", ctypes.c_char_p),
                ("no_providers", ctypes.c_bool)]


# dw_provider_fn (dogwood.h): (ud, name, args JSON, args length, out, outcap) -> length or < 0
PROVIDER_FN = ctypes.CFUNCTYPE(ctypes.c_long, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t,
                               ctypes.c_void_p, ctypes.c_size_t)


class RawVerdict(ctypes.Structure):
    _fields_ = [("decided", ctypes.c_bool), ("allow", ctypes.c_bool), ("cause", ctypes.c_int),
                ("ndetermining", ctypes.c_uint32), ("determining", ctypes.c_uint32 * MAX_RULES),
                ("nerrors", ctypes.c_uint32), ("timestamp", ctypes.c_int64),
                ("message", ctypes.c_char * 256)]


class EngineDurable(ctypes.Structure):
    _fields_ = [("state_dir", ctypes.c_char_p), ("durability", ctypes.c_int),
                ("checkpoint_every", ctypes.c_int64), ("checkpoint_interval_ms", ctypes.c_uint32),
                ("fileops", ctypes.c_void_p)]


class EngineRecovery(ctypes.Structure):
    _fields_ = [("events", ctypes.c_uint64), ("replayed", ctypes.c_uint64), ("checkpoint", ctypes.c_bool),
                ("checkpoint_seq", ctypes.c_uint64), ("retained", ctypes.c_uint32),
                ("seconds", ctypes.c_double), ("note", ctypes.c_char * 256)]


class ReloadInfo(ctypes.Structure):
    _fields_ = [("leaves", ctypes.c_uint32), ("kept", ctypes.c_uint32), ("fresh", ctypes.c_uint32),
                ("generation", ctypes.c_uint32)]


class EngineStats(ctypes.Structure):
    _fields_ = [("history_events", ctypes.c_uint32), ("next_seq", ctypes.c_uint64),
                ("restored", ctypes.c_uint64), ("replayed", ctypes.c_uint64),
                ("log_next_seq", ctypes.c_uint64), ("log_appends", ctypes.c_uint64),
                ("log_syncs", ctypes.c_uint64), ("log_max_batch", ctypes.c_uint64),
                ("checkpoints", ctypes.c_uint64), ("checkpoint_failures", ctypes.c_uint64),
                ("generation", ctypes.c_uint32), ("policies_evaluated", ctypes.c_uint64), ("durable", ctypes.c_bool),
                ("checkpoint_error", ctypes.c_char * 256)]


# name: (restype, argtypes)
_E = ctypes.c_void_p
_P = ctypes.POINTER
_PROTOS = {
    "dw_engine_open": (_E, [_P(EngineConfig), ctypes.c_char_p, ctypes.c_size_t]),
    "dw_engine_open_durable": (_E, [_P(EngineConfig), _P(EngineDurable), _P(EngineRecovery),
                                    ctypes.c_char_p, ctypes.c_size_t]),
    "dw_engine_close": (ctypes.c_int, [_E]),
    "dw_engine_register_provider": (ctypes.c_int, [_E, ctypes.c_char_p, PROVIDER_FN, ctypes.c_void_p]),
    "dw_engine_decide_json": (ctypes.c_int, [_E, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_int64, _P(RawVerdict)]),
    "dw_engine_decide_request_json": (ctypes.c_int, [_E, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_int64,
                                                     _P(RawVerdict)]),
    "dw_engine_record_json": (ctypes.c_int, [_E, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_int64,
                                             ctypes.c_char_p, ctypes.c_size_t]),
    "dw_engine_reset_history": (None, [_E]),
    "dw_engine_rule_name": (ctypes.c_char_p, [_E, ctypes.c_uint32]),
    "dw_engine_rule_description": (ctypes.c_size_t, [_E, ctypes.c_uint32, ctypes.c_char_p, ctypes.c_size_t]),
    "dw_engine_history_length": (ctypes.c_uint32, [_E]),
    "dw_engine_reload": (ctypes.c_int, [_E, ctypes.c_char_p, ctypes.c_size_t, _P(ReloadInfo),
                                        ctypes.c_char_p, ctypes.c_size_t]),
    "dw_engine_checkpoint": (ctypes.c_int, [_E]),
    "dw_engine_export_state": (ctypes.c_int, [_E, _P(ctypes.c_void_p), _P(ctypes.c_size_t)]),
    "dw_engine_import_state": (ctypes.c_int, [_E, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t]),
    "dw_engine_get_stats": (None, [_E, _P(EngineStats)]),
    "dw_engine_history_error": (ctypes.c_char_p, [_E]),
    "dw_cause_name": (ctypes.c_char_p, [ctypes.c_int]),
    "dw_version": (ctypes.c_char_p, []),
    "dw_free": (None, [ctypes.c_void_p]),
}

_lib = None


def lib():
    """The loaded library, its functions declared (loaded on first use)."""
    global _lib
    if _lib is None:
        handle = ctypes.CDLL(os.environ.get("DOGWOOD_LIB") or SONAME)
        for name, (res, args) in _PROTOS.items():
            fn = getattr(handle, name)
            fn.restype = res
            fn.argtypes = args
        _lib = handle
    return _lib


SIZES = {"dw_engine_config": EngineConfig, "dw_verdict": RawVerdict, "dw_engine_durable": EngineDurable,
         "dw_engine_recovery": EngineRecovery, "dw_reload_info": ReloadInfo, "dw_engine_stats": EngineStats}
