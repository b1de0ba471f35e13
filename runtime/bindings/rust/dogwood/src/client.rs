//! A client of dwd, the Dogwood decision service (docs/DWD.md): JSON lines
//! over a Unix stream socket, one reply line per request, in order.
//!
//! ```no_run
//! use dogwood::client::Client;
//! let mut c = Client::connect("/run/dwd.sock")?;
//! let d = c.decide("fs:read", r#"{"path":"~/project/a.c","operation":"read_content"}"#)?;
//! println!("{} {} {}", d.allow, d.cause, d.rule);
//! # Ok::<(), dogwood::Error>(())
//! ```
//! One `Client` is one connection; give each thread its own.
use crate::json::{self, Value};
use crate::{Error, Result};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;

/// dwd's reply to a `decide`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decision {
    pub allow: bool,
    /// permitted, forbidden, no_match, internal_fault
    pub cause: String,
    /// The governing rule; `<default-deny>` when none.
    pub rule: String,
    /// Every determining rule, in rule order.
    pub rules: Vec<String>,
    /// Box's denial text ("" on a permit).
    pub message: String,
}

pub struct Client {
    out: UnixStream,
    inp: BufReader<UnixStream>,
}

fn field<'a>(v: &'a Value, k: &str) -> Result<&'a Value> {
    v.get(k).ok_or_else(|| Error(format!("dwd's reply has no `{}`", k)))
}

fn string(v: &Value, k: &str) -> Result<String> {
    field(v, k)?.as_str().map(str::to_string).ok_or_else(|| Error(format!("dwd's `{}` is not a string", k)))
}

impl Client {
    pub fn connect(path: impl AsRef<Path>) -> Result<Client> {
        let s = UnixStream::connect(path.as_ref()).map_err(|e| Error(format!("{}: {}", path.as_ref().display(), e)))?;
        let r = s.try_clone().map_err(|e| Error(e.to_string()))?;
        Ok(Client { out: s, inp: BufReader::new(r) })
    }

    /// Sends one request object, returns its reply; `{"ok":false}` is an Error.
    pub fn call(&mut self, request: &Value) -> Result<Value> {
        let line = format!("{}\n", request);
        self.out.write_all(line.as_bytes()).map_err(|e| Error(format!("dwd: {}", e)))?;
        let mut reply = String::new();
        if self.inp.read_line(&mut reply).map_err(|e| Error(format!("dwd: {}", e)))? == 0 {
            return Err(Error("dwd closed the connection".into()));
        }
        let v = json::parse(&reply).map_err(Error)?;
        if v.get("ok").and_then(Value::as_bool) != Some(true) {
            return Err(Error(v.get("error").and_then(Value::as_str).unwrap_or("dwd refused the request").to_string()));
        }
        Ok(v)
    }

    /// A `decide` of `action` with `input` (a JSON object's text).
    pub fn decide(&mut self, action: &str, input: &str) -> Result<Decision> {
        self.decide_with(action, input, vec![])
    }

    /// As `decide`, with further members (request_id, namespace, ...).
    pub fn decide_with(&mut self, action: &str, input: &str, extra: Vec<(&str, Value)>) -> Result<Decision> {
        let mut m = vec![("op", Value::string("decide")), ("action", Value::string(action)),
                         ("input", json::parse(input).map_err(Error)?)];
        m.extend(extra);
        let r = self.call(&Value::object(m))?;
        let rules = field(&r, "determining")?
            .as_array()
            .ok_or_else(|| Error("dwd's `determining` is not an array".into()))?
            .iter()
            .map(|v| v.as_str().map(str::to_string).ok_or_else(|| Error("a determining rule is not a string".into())))
            .collect::<Result<Vec<_>>>()?;
        Ok(Decision { allow: string(&r, "verdict")? == "permit", cause: string(&r, "cause")?,
                      rule: string(&r, "rule")?, rules, message: string(&r, "message")? })
    }

    /// A `record` of a `response` / `error` event; `output` is JSON text.
    pub fn record(&mut self, action: &str, kind: &str, input: &str, output: Option<&str>) -> Result<()> {
        let mut m = vec![("op", Value::string("record")), ("action", Value::string(action)),
                         ("kind", Value::string(kind)), ("input", json::parse(input).map_err(Error)?)];
        if let Some(o) = output {
            m.push(("output", json::parse(o).map_err(Error)?));
        }
        self.call(&Value::object(m)).map(|_| ())
    }

    /// Swaps dwd's policy for the artifact at `path` (a path dwd can open).
    pub fn reload(&mut self, path: &str) -> Result<Value> {
        self.call(&Value::object(vec![("op", Value::string("reload")), ("artifact", Value::string(path))]))
    }

    pub fn stats(&mut self) -> Result<Value> {
        self.call(&Value::object(vec![("op", Value::string("stats"))]))
    }
}
