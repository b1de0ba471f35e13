//! Raw declarations of runtime/dogwood.h (libdogwood.so.1, symbol version
//! DOGWOOD_1).  The structures mirror the header's field for field; the
//! tests compare their sizes with the C compiler's (DW_ABI_SIZES).
#![allow(non_camel_case_types)]
use std::os::raw::{c_char, c_int, c_long, c_void};

/// `ts` argument meaning "the event's time member, else the clock"
/// (dogwood.h's DW_TS_NOW); every other value, 0 included, is a time.
pub const DW_TS_NOW: i64 = i64::MIN;
pub const DW_VERDICT_MAX_RULES: usize = 32;

pub const DW_CAUSE_PERMITTED: c_int = 0;
pub const DW_CAUSE_FORBIDDEN: c_int = 1;
pub const DW_CAUSE_NO_MATCH: c_int = 2;
pub const DW_CAUSE_INTERNAL_FAULT: c_int = 3;

pub const DW_DURABILITY_FULL: c_int = 0;
pub const DW_DURABILITY_BATCH: c_int = 1;
pub const DW_DURABILITY_NONE: c_int = 2;

#[repr(C)]
pub struct dw_engine {
    _opaque: [u8; 0],
}

#[repr(C)]
pub struct dw_engine_config {
    pub policy_path: *const c_char,
    pub schema_path: *const c_char,
    pub events_path: *const c_char,
    pub ticks_per_second: i64,
    pub replay_timestamps: bool,
    pub temporal_work_bound: u64,
    pub no_request_validation: bool,
    pub providers_path: *const c_char,
    pub no_providers: bool,
}

/// `dw_provider_fn`: (ud, name, args JSON, its length, out, outcap) -> the result's length, or < 0 (an error
/// message in out).
pub type dw_provider_fn = Option<unsafe extern "C" fn(ud: *mut c_void, name: *const c_char, args: *const c_char,
                                                      args_len: usize, out: *mut c_char, outcap: usize) -> c_long>;

#[repr(C)]
pub struct dw_verdict {
    pub decided: bool,
    pub allow: bool,
    pub cause: c_int,
    pub ndetermining: u32,
    pub determining: [u32; DW_VERDICT_MAX_RULES],
    pub nerrors: u32,
    pub timestamp: i64,
    pub message: [c_char; 256],
}

#[repr(C)]
pub struct dw_engine_durable {
    pub state_dir: *const c_char,
    pub durability: c_int,
    pub checkpoint_every: i64,
    pub checkpoint_interval_ms: u32,
    pub fileops: *const c_void,
}

#[repr(C)]
pub struct dw_engine_recovery {
    pub events: u64,
    pub replayed: u64,
    pub checkpoint: bool,
    pub checkpoint_seq: u64,
    pub retained: u32,
    pub seconds: f64,
    pub note: [c_char; 256],
}

#[repr(C)]
#[derive(Default)]
pub struct dw_reload_info {
    pub leaves: u32,
    pub kept: u32,
    pub fresh: u32,
    pub generation: u32,
}

#[repr(C)]
pub struct dw_engine_stats {
    pub history_events: u32,
    pub next_seq: u64,
    pub restored: u64,
    pub replayed: u64,
    pub log_next_seq: u64,
    pub log_appends: u64,
    pub log_syncs: u64,
    pub log_max_batch: u64,
    pub checkpoints: u64,
    pub checkpoint_failures: u64,
    pub generation: u32,
    pub policies_evaluated: u64,
    pub durable: bool,
    pub checkpoint_error: [c_char; 256],
}

extern "C" {
    pub fn dw_engine_open(cfg: *const dw_engine_config, err: *mut c_char, errcap: usize) -> *mut dw_engine;
    pub fn dw_engine_open_durable(cfg: *const dw_engine_config, d: *const dw_engine_durable,
                                  rec: *mut dw_engine_recovery, err: *mut c_char, errcap: usize) -> *mut dw_engine;
    pub fn dw_engine_close(e: *mut dw_engine) -> c_int;
    pub fn dw_engine_register_provider(e: *mut dw_engine, name: *const c_char, f: dw_provider_fn, ud: *mut c_void)
                                       -> c_int;
    pub fn dw_engine_decide_json(e: *mut dw_engine, json: *const c_char, len: usize, ts: i64,
                                 v: *mut dw_verdict) -> c_int;
    pub fn dw_engine_record_json(e: *mut dw_engine, json: *const c_char, len: usize, ts: i64,
                                 err: *mut c_char, errcap: usize) -> c_int;
    pub fn dw_engine_decide_request_json(e: *mut dw_engine, json: *const c_char, len: usize, ts: i64,
                                         v: *mut dw_verdict) -> c_int;
    pub fn dw_engine_reset_history(e: *mut dw_engine);
    pub fn dw_engine_rule_name(e: *mut dw_engine, rule: u32) -> *const c_char;
    pub fn dw_engine_rule_description(e: *mut dw_engine, rule: u32, buf: *mut c_char, cap: usize) -> usize;
    pub fn dw_engine_history_length(e: *const dw_engine) -> u32;
    pub fn dw_engine_reload(e: *mut dw_engine, artifact: *const c_void, len: usize, info: *mut dw_reload_info,
                            err: *mut c_char, errcap: usize) -> c_int;
    pub fn dw_engine_checkpoint(e: *mut dw_engine) -> c_int;
    pub fn dw_engine_export_state(e: *mut dw_engine, state: *mut *mut c_void, len: *mut usize) -> c_int;
    pub fn dw_engine_import_state(e: *mut dw_engine, state: *const c_void, len: usize, err: *mut c_char,
                                  errcap: usize) -> c_int;
    pub fn dw_engine_get_stats(e: *mut dw_engine, st: *mut dw_engine_stats);
    pub fn dw_engine_history_error(e: *mut dw_engine) -> *const c_char;
    pub fn dw_cause_name(c: c_int) -> *const c_char;
    pub fn dw_version() -> *const c_char;
    pub fn dw_free(p: *mut c_void);
}

/// Sizes of the mirrored structures, for the ABI check.
pub fn abi_sizes() -> [(&'static str, usize); 6] {
    use std::mem::size_of;
    [
        ("dw_engine_config", size_of::<dw_engine_config>()),
        ("dw_verdict", size_of::<dw_verdict>()),
        ("dw_engine_durable", size_of::<dw_engine_durable>()),
        ("dw_engine_recovery", size_of::<dw_engine_recovery>()),
        ("dw_reload_info", size_of::<dw_reload_info>()),
        ("dw_engine_stats", size_of::<dw_engine_stats>()),
    ]
}
