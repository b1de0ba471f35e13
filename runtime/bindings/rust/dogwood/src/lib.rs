//! Safe bindings of libdogwood, the embedded Dogwood policy engine
//! (runtime/dogwood.h), and a client of the dwd decision service.
//!
//! ```no_run
//! let e = dogwood::Engine::open("policy.dw", "box")?;
//! let v = e.decide(r#"{"action":"fs:read","kind":"request",
//!                      "input":{"path":"~/project/a.c","operation":"read_content"}}"#)?;
//! println!("{} {} {:?}", v.allow, v.cause, v.rules);
//! # Ok::<(), dogwood::Error>(())
//! ```
//!
//! An [`Engine`] is `Send + Sync`: the C engine serialises calls on its own
//! lock (a durable engine waits for its log after releasing it, so
//! concurrent decisions share one fsync), and it is closed once, on drop.
use dogwood_sys as sys;
use std::ffi::{CStr, CString};
use std::fmt;
use std::os::raw::{c_char, c_void};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::ptr::{self, NonNull};

pub mod client;
pub mod json;

/// A call that did not do its job; the text is the library's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error(pub String);

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

pub type Result<T> = std::result::Result<T, Error>;

/// Box's cause of a verdict (box.md §8).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cause {
    Permitted,
    Forbidden,
    NoMatch,
    InternalFault,
}

impl Cause {
    fn from_raw(c: i32) -> Cause {
        match c {
            sys::DW_CAUSE_PERMITTED => Cause::Permitted,
            sys::DW_CAUSE_FORBIDDEN => Cause::Forbidden,
            sys::DW_CAUSE_NO_MATCH => Cause::NoMatch,
            _ => Cause::InternalFault,
        }
    }
    /// "permitted", "forbidden", "no_match" or "internal_fault".
    pub fn as_str(self) -> &'static str {
        match self {
            Cause::Permitted => "permitted",
            Cause::Forbidden => "forbidden",
            Cause::NoMatch => "no_match",
            Cause::InternalFault => "internal_fault",
        }
    }
}

impl fmt::Display for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    pub allow: bool,
    pub cause: Cause,
    /// The determining rules by Box name: `@id`, else `policy_<i>`.
    pub rules: Vec<String>,
    /// False when the event's kind is not a decision kind.
    pub decided: bool,
    /// Erroring policies (Box denies on any).
    pub errors: u32,
    /// Ticks the engine gave the event.
    pub timestamp: i64,
    /// Why, for internal faults.
    pub message: String,
}

/// How an engine is opened (`dw_engine_config`).
#[derive(Clone, Debug, Default)]
pub struct Config {
    /// A `.dw` source or `.dwb` artifact.
    pub policy: PathBuf,
    /// A Cedar schema file, or "box" for Box's built-in vocabulary.
    pub schema: Option<String>,
    /// An event schema file or built-in name; None: Box's with "box", else the default.
    pub events: Option<String>,
    /// 0: 1,000,000,000 (RFC 3339 times).
    pub ticks_per_second: i64,
    /// Take the events' times as given (replaying a trace).
    pub replay_timestamps: bool,
    /// Steps of temporal evaluation per decision (a deny past it); 0: the library's default.
    pub temporal_work_bound: u64,
    /// Take requests as given, unchecked against the schema (the reference's behaviour); false: a deny.
    pub no_request_validation: bool,
    /// A provider declaration file (dogwood.md §13.2); None: the built-in providers alone.
    pub providers: Option<PathBuf>,
    /// Refuse any set that calls a provider (dogwood.md §13.6).
    pub no_providers: bool,
}

impl Config {
    pub fn new(policy: impl AsRef<Path>) -> Config {
        Config { policy: policy.as_ref().to_path_buf(), ..Config::default() }
    }
    pub fn schema(mut self, schema: &str) -> Config {
        self.schema = Some(schema.to_string());
        self
    }
    pub fn events(mut self, events: &str) -> Config {
        self.events = Some(events.to_string());
        self
    }
    pub fn providers(mut self, path: impl AsRef<Path>) -> Config {
        self.providers = Some(path.as_ref().to_path_buf());
        self
    }
    pub fn replay_timestamps(mut self, on: bool) -> Config {
        self.replay_timestamps = on;
        self
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Durability {
    /// Every event is synced before the call returns.
    Full,
    /// Written before the call returns, synced by a flusher within ~5 ms.
    Batch,
    /// Written, never synced.
    None,
}

/// A durable history in `state_dir` (`dw_engine_durable`).
#[derive(Clone, Debug)]
pub struct Durable {
    pub state_dir: PathBuf,
    pub durability: Durability,
    /// Events between checkpoints; 0: 10,000; negative: never by count.
    pub checkpoint_every: i64,
    /// Also checkpoint after this long; 0: not by time.
    pub checkpoint_interval_ms: u32,
}

impl Durable {
    pub fn new(state_dir: impl AsRef<Path>) -> Durable {
        Durable { state_dir: state_dir.as_ref().to_path_buf(), durability: Durability::Full, checkpoint_every: 0,
                  checkpoint_interval_ms: 0 }
    }
}

/// What opening a durable engine found.
#[derive(Clone, Debug)]
pub struct Recovery {
    pub events: u64,
    pub replayed: u64,
    pub checkpoint: bool,
    pub retained: u32,
    pub seconds: f64,
    pub note: String,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReloadInfo {
    pub leaves: u32,
    pub kept: u32,
    pub fresh: u32,
    pub generation: u32,
}

#[derive(Clone, Debug)]
pub struct Stats {
    pub history_events: u32,
    pub next_seq: u64,
    pub restored: u64,
    pub replayed: u64,
    pub log_appends: u64,
    pub log_syncs: u64,
    pub checkpoints: u64,
    pub checkpoint_failures: u64,
    pub generation: u32,
    /// Policies the Cedar decisions evaluated since open.
    pub policies_evaluated: u64,
    pub durable: bool,
    pub checkpoint_error: String,
}

fn text(buf: &[c_char]) -> String {
    let bytes: Vec<u8> = buf.iter().take_while(|&&c| c != 0).map(|&c| c as u8).collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

fn cstring(what: &str, s: &[u8]) -> Result<CString> {
    CString::new(s).map_err(|_| Error(format!("{} contains a NUL byte", what)))
}

/// The loaded library's release (`dw_version`).
pub fn version() -> String {
    unsafe { CStr::from_ptr(sys::dw_version()) }.to_string_lossy().into_owned()
}

/// One policy set, its schemas and its event history.
pub struct Engine {
    e: NonNull<sys::dw_engine>,
    /// Registered provider callbacks, owned here (the C side holds pointers to them) until Drop.
    providers: std::sync::Mutex<Vec<(String, Box<ProviderBox>)>>,
}

/// A provider callback (`Engine::register_provider`): (name, arguments as a JSON array) -> the result as
/// JSON, or the error message.
pub type ProviderFn = dyn Fn(&str, &str) -> std::result::Result<String, String> + Send + Sync;
struct ProviderBox(Box<ProviderFn>);

unsafe extern "C" fn provider_trampoline(ud: *mut c_void, name: *const c_char, args: *const c_char, args_len: usize,
                                         out: *mut c_char, outcap: usize) -> std::os::raw::c_long {
    let f = &*(ud as *const ProviderBox);
    let name = CStr::from_ptr(name).to_string_lossy();
    let args = String::from_utf8_lossy(std::slice::from_raw_parts(args as *const u8, args_len));
    // a panic must not unwind into C: it is a provider error like any other
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (f.0)(&name, &args)))
        .unwrap_or_else(|_| Err("the provider callback panicked".to_string()));
    let out = std::slice::from_raw_parts_mut(out as *mut u8, outcap);
    match r {
        Ok(json) => {
            if json.len() < outcap {
                out[..json.len()].copy_from_slice(json.as_bytes());
            }
            json.len() as std::os::raw::c_long
        }
        Err(msg) => {
            let n = msg.len().min(outcap.saturating_sub(1));
            out[..n].copy_from_slice(&msg.as_bytes()[..n]);
            if outcap > 0 {
                out[n] = 0;
            }
            -1
        }
    }
}

// The C API may be called from any thread, by many at once, on one engine
// (one lock inside); dw_engine_close runs only from Drop, i.e. last.
unsafe impl Send for Engine {}
unsafe impl Sync for Engine {}

impl Drop for Engine {
    fn drop(&mut self) {
        // a failed final flush was reported on stderr; Drop cannot return it
        unsafe { sys::dw_engine_close(self.e.as_ptr()); }
    }
}

impl Engine {
    /// Opens `policy` against `schema` ("box", or a Cedar schema file).
    pub fn open(policy: impl AsRef<Path>, schema: &str) -> Result<Engine> {
        Engine::with_config(&Config::new(policy).schema(schema))
    }

    pub fn with_config(cfg: &Config) -> Result<Engine> {
        Engine::open_raw(cfg, None).map(|(e, _)| e)
    }

    /// Opens the engine with its durable history (recovering what is logged).
    pub fn open_durable(cfg: &Config, d: &Durable) -> Result<(Engine, Recovery)> {
        let (e, r) = Engine::open_raw(cfg, Some(d))?;
        Ok((e, r.expect("a durable open reports its recovery")))
    }

    fn open_raw(cfg: &Config, d: Option<&Durable>) -> Result<(Engine, Option<Recovery>)> {
        let policy = cstring("the policy path", cfg.policy.as_os_str().as_bytes())?;
        let schema = cfg.schema.as_deref().map(|s| cstring("the schema", s.as_bytes())).transpose()?;
        let events = cfg.events.as_deref().map(|s| cstring("the event schema", s.as_bytes())).transpose()?;
        let providers =
            cfg.providers.as_deref().map(|p| cstring("the provider declarations", p.as_os_str().as_bytes())).transpose()?;
        let raw = sys::dw_engine_config {
            policy_path: policy.as_ptr(),
            schema_path: schema.as_ref().map_or(ptr::null(), |s| s.as_ptr()),
            events_path: events.as_ref().map_or(ptr::null(), |s| s.as_ptr()),
            ticks_per_second: cfg.ticks_per_second,
            replay_timestamps: cfg.replay_timestamps,
            temporal_work_bound: cfg.temporal_work_bound,
            no_request_validation: cfg.no_request_validation,
            providers_path: providers.as_ref().map_or(ptr::null(), |s| s.as_ptr()),
            no_providers: cfg.no_providers,
        };
        let mut err = [0 as c_char; 1024];
        let mut recovery = None;
        let p = match d {
            None => unsafe { sys::dw_engine_open(&raw, err.as_mut_ptr(), err.len()) },
            Some(d) => {
                let dir = cstring("the state directory", d.state_dir.as_os_str().as_bytes())?;
                let rd = sys::dw_engine_durable {
                    state_dir: dir.as_ptr(),
                    durability: match d.durability {
                        Durability::Full => sys::DW_DURABILITY_FULL,
                        Durability::Batch => sys::DW_DURABILITY_BATCH,
                        Durability::None => sys::DW_DURABILITY_NONE,
                    },
                    checkpoint_every: d.checkpoint_every,
                    checkpoint_interval_ms: d.checkpoint_interval_ms,
                    fileops: ptr::null(),
                };
                let mut rec: sys::dw_engine_recovery = unsafe { std::mem::zeroed() };
                let p = unsafe { sys::dw_engine_open_durable(&raw, &rd, &mut rec, err.as_mut_ptr(), err.len()) };
                recovery = Some(Recovery { events: rec.events, replayed: rec.replayed, checkpoint: rec.checkpoint,
                                           retained: rec.retained, seconds: rec.seconds, note: text(&rec.note) });
                p
            }
        };
        match NonNull::new(p) {
            Some(e) => Ok((Engine { e, providers: Default::default() }, recovery)),
            None => Err(Error(text(&err))),
        }
    }

    fn ptr(&self) -> *mut sys::dw_engine {
        self.e.as_ptr()
    }

    fn verdict(&self, v: &sys::dw_verdict) -> Verdict {
        let n = (v.ndetermining as usize).min(sys::DW_VERDICT_MAX_RULES);
        Verdict {
            allow: v.allow,
            cause: Cause::from_raw(v.cause),
            rules: v.determining[..n].iter().map(|&r| self.rule_name(r)).collect(),
            decided: v.decided,
            errors: v.nerrors,
            timestamp: v.timestamp,
            message: text(&v.message),
        }
    }

    fn decide_with(&self, json: &str, ts: i64, request: bool) -> Result<Verdict> {
        let mut v: sys::dw_verdict = unsafe { std::mem::zeroed() };
        let p = json.as_ptr() as *const c_char;
        let rc = unsafe {
            if request {
                sys::dw_engine_decide_request_json(self.ptr(), p, json.len(), ts, &mut v)
            } else {
                sys::dw_engine_decide_json(self.ptr(), p, json.len(), ts, &mut v)
            }
        };
        if rc != 0 {
            return Err(Error("the engine is unusable".into()));
        }
        Ok(self.verdict(&v))
    }

    /// Decides one event in Box's JSON form (its `time`, else the clock).
    /// A deny is a verdict, not an error.
    pub fn decide(&self, json: &str) -> Result<Verdict> {
        self.decide_with(json, sys::DW_TS_NOW, false)
    }

    /// As `decide`, at `ts` ticks.
    pub fn decide_at(&self, json: &str, ts: i64) -> Result<Verdict> {
        self.decide_with(json, ts, false)
    }

    /// Implements provider `name` ("Ns::Fn", or "Ns::Fn.m" for an output method, dogwood.md §13.5) with `f`:
    /// it gets the resolved arguments as a JSON array in Cedar's value form and returns the result as JSON
    /// (conforming to the declared output type) or an error message; an error denies the decision.  `f` must
    /// be pure; it runs under the engine's lock.
    pub fn register_provider<F>(&self, name: &str, f: F) -> Result<()>
    where
        F: Fn(&str, &str) -> std::result::Result<String, String> + Send + Sync + 'static,
    {
        let cname = cstring("the provider name", name.as_bytes())?;
        let b = Box::new(ProviderBox(Box::new(f)));
        let ud = &*b as *const ProviderBox as *mut c_void;
        let mut held = self.providers.lock().unwrap_or_else(|p| p.into_inner());
        let rc = unsafe { sys::dw_engine_register_provider(self.ptr(), cname.as_ptr(), Some(provider_trampoline), ud) };
        if rc != 0 {
            return Err(Error(format!("cannot register provider {}", name)));
        }
        // the replaced callback is no longer reachable from C (registration swapped it under the engine's lock)
        held.retain(|(n, _)| n != name);
        held.push((name.to_string(), b));
        Ok(())
    }

    /// Decides a Cedar-shaped request `{principal, action, resource, context}`.
    pub fn decide_request(&self, json: &str) -> Result<Verdict> {
        self.decide_with(json, sys::DW_TS_NOW, true)
    }

    /// Appends a `::response` / `::error` event (after the effect happened).
    pub fn record(&self, json: &str) -> Result<()> {
        self.record_at(json, sys::DW_TS_NOW)
    }

    pub fn record_at(&self, json: &str, ts: i64) -> Result<()> {
        let mut err = [0 as c_char; 512];
        let rc = unsafe {
            sys::dw_engine_record_json(self.ptr(), json.as_ptr() as *const c_char, json.len(), ts, err.as_mut_ptr(),
                                       err.len())
        };
        if rc != 0 {
            return Err(Error(text(&err)));
        }
        Ok(())
    }

    /// Swaps the policy for a compiled artifact (`.dwb` bytes) atomically.
    pub fn reload(&self, artifact: &[u8]) -> Result<ReloadInfo> {
        let mut info = sys::dw_reload_info::default();
        let mut err = [0 as c_char; 512];
        let rc = unsafe {
            sys::dw_engine_reload(self.ptr(), artifact.as_ptr() as *const c_void, artifact.len(), &mut info,
                                  err.as_mut_ptr(), err.len())
        };
        if rc != 0 {
            return Err(Error(text(&err)));
        }
        Ok(ReloadInfo { leaves: info.leaves, kept: info.kept, fresh: info.fresh, generation: info.generation })
    }

    /// Forgets the history (a durable history is never forgotten).
    pub fn reset_history(&self) {
        unsafe { sys::dw_engine_reset_history(self.ptr()) }
    }

    pub fn checkpoint(&self) -> Result<()> {
        if unsafe { sys::dw_engine_checkpoint(self.ptr()) } != 0 {
            return Err(Error(format!("checkpoint failed: {}", self.stats().checkpoint_error)));
        }
        Ok(())
    }

    /// The temporal state, for `import_state` into a fresh engine on the same policy.
    pub fn export_state(&self) -> Result<Vec<u8>> {
        let mut p: *mut c_void = ptr::null_mut();
        let mut n = 0usize;
        if unsafe { sys::dw_engine_export_state(self.ptr(), &mut p, &mut n) } != 0 {
            return Err(Error("cannot export the state".into()));
        }
        let v = unsafe { std::slice::from_raw_parts(p as *const u8, n) }.to_vec();
        unsafe { sys::dw_free(p) };
        Ok(v)
    }

    pub fn import_state(&self, state: &[u8]) -> Result<()> {
        let mut err = [0 as c_char; 512];
        let rc = unsafe {
            sys::dw_engine_import_state(self.ptr(), state.as_ptr() as *const c_void, state.len(), err.as_mut_ptr(),
                                        err.len())
        };
        if rc != 0 {
            return Err(Error(text(&err)));
        }
        Ok(())
    }

    /// Box's name for a rule: its `@id`, else `policy_<i>`.
    pub fn rule_name(&self, rule: u32) -> String {
        unsafe { CStr::from_ptr(sys::dw_engine_rule_name(self.ptr(), rule)) }.to_string_lossy().into_owned()
    }

    /// A rule's `@description`, "" if none.
    pub fn rule_description(&self, rule: u32) -> String {
        let mut buf = [0 as c_char; 4096];
        unsafe { sys::dw_engine_rule_description(self.ptr(), rule, buf.as_mut_ptr(), buf.len()) };
        text(&buf)
    }

    pub fn history_length(&self) -> u32 {
        unsafe { sys::dw_engine_history_length(self.ptr()) }
    }

    pub fn stats(&self) -> Stats {
        let mut st: sys::dw_engine_stats = unsafe { std::mem::zeroed() };
        unsafe { sys::dw_engine_get_stats(self.ptr(), &mut st) };
        Stats {
            history_events: st.history_events,
            next_seq: st.next_seq,
            restored: st.restored,
            replayed: st.replayed,
            log_appends: st.log_appends,
            log_syncs: st.log_syncs,
            checkpoints: st.checkpoints,
            checkpoint_failures: st.checkpoint_failures,
            generation: st.generation,
            policies_evaluated: st.policies_evaluated,
            durable: st.durable,
            checkpoint_error: text(&st.checkpoint_error),
        }
    }
}
