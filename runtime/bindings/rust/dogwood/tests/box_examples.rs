//! The Rust bindings decide Box's example events (run by tests/lib/run.sh:
//! `cargo test --offline`).  Environment: DW_EXAMPLES (the bundles),
//! DW_VERDICTS_OUT (verdict lines, compared with the C API's), DW_ABI_SIZES,
//! DWC and DWD (binaries, for artifacts and the dwd client).  A test whose
//! variable is unset passes without checking (cargo test alone, outside
//! run.sh); run.sh sets them all.
use dogwood::client::Client;
use dogwood::json::{self, Value};
use dogwood::{Config, Durability, Durable, Engine, Verdict};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::{env, fs, thread, time::Duration};

fn examples() -> Option<PathBuf> {
    env::var_os("DW_EXAMPLES").map(PathBuf::from)
}

fn tmpdir(tag: &str) -> PathBuf {
    let d = env::temp_dir().join(format!("dw-rs-{}-{}", tag, std::process::id()));
    let _ = fs::remove_dir_all(&d);
    fs::create_dir_all(&d).unwrap();
    d
}

fn line_of(where_: &str, v: &Verdict) -> String {
    format!("{} {} {} [{}]", where_, if v.allow { "ALLOW" } else { "DENY" }, v.cause, v.rules.join(","))
}

fn lines(path: &Path) -> Vec<String> {
    fs::read_to_string(path).unwrap().split('\n').map(str::to_string).collect()
}

/// Feeds lines numbered from `first` as the C test does; returns the verdict
/// lines and every expectation that failed.
fn feed(e: &Engine, tag: &str, name: &str, ls: &[String], first: usize) -> (Vec<String>, Vec<String>) {
    let (mut out, mut bad) = (vec![], vec![]);
    for (i, l) in ls.iter().enumerate() {
        if l.trim().is_empty() {
            continue;
        }
        let where_ = format!("{}/{}:{}", tag, name, first + i);
        let ev = json::parse(l).unwrap();
        let v = if name == "requests.jsonl" {
            e.reset_history();
            e.decide_request(l).unwrap()
        } else if ev.get("expect").is_some() || ev.get("kind").and_then(Value::as_str) == Some("request") {
            e.decide(l).unwrap()
        } else {
            e.record(l).unwrap();
            continue;
        };
        out.push(line_of(&where_, &v));
        if let Some(want) = ev.get("expect").and_then(Value::as_str) {
            let rules_ok = ev.get("rules").map_or(true, |r| {
                r.as_array().unwrap().iter().map(|x| x.as_str().unwrap().to_string()).collect::<Vec<_>>() == v.rules
            });
            let cause_ok = ev.get("cause").map_or(true, |c| c.as_str() == Some(v.cause.as_str()));
            if (want == "allow") != v.allow || !rules_ok || !cause_ok {
                bad.push(format!("{}: expected {}, got {}", where_, want, out.last().unwrap()));
            }
        }
    }
    (out, bad)
}

fn trace_engine(policy: &Path) -> Engine {
    Engine::with_config(&Config::new(policy).schema("box").replay_timestamps(true)).unwrap()
}

#[test]
fn examples_decide_as_expected() {
    let Some(ex) = examples() else { return };
    let mut bundles: Vec<_> = fs::read_dir(&ex).unwrap().map(|d| d.unwrap().path()).filter(|p| p.is_dir()).collect();
    bundles.sort();
    let (mut all, mut bad) = (vec![], vec![]);
    for b in &bundles {
        let tag = b.file_name().unwrap().to_str().unwrap();
        for name in ["requests.jsonl", "trace.jsonl"] {
            let path = b.join(name);
            if !path.exists() {
                continue;
            }
            let cfg = Config::new(b.join("policy.dw")).schema("box").replay_timestamps(name == "trace.jsonl");
            let e = Engine::with_config(&cfg).unwrap();
            let (o, x) = feed(&e, tag, name, &lines(&path), 1);
            all.extend(o);
            bad.extend(x);
        }
    }
    assert!(bad.is_empty(), "{:#?}", bad);
    assert!(all.len() > 50);
    if let Some(out) = env::var_os("DW_VERDICTS_OUT") {
        fs::write(out, all.iter().map(|l| format!("{}\n", l)).collect::<String>()).unwrap();
    }
}

/// Bundle 06's policy, trace lines, and the trace's verdicts from one plain engine.
fn budget_trace() -> Option<(PathBuf, Vec<String>, Vec<String>)> {
    let ex = examples()?;
    let policy = ex.join("06-http-request-budget/policy.dw");
    let ls = lines(&ex.join("06-http-request-budget/trace.jsonl"));
    let (want, _) = feed(&trace_engine(&policy), "b", "trace.jsonl", &ls, 1);
    Some((policy, ls, want))
}

#[test]
fn durable_engine_recovers_its_history() {
    let Some((policy, ls, want)) = budget_trace() else { return };
    let state = tmpdir("state");
    let cfg = Config::new(&policy).schema("box").replay_timestamps(true);
    let half = ls.len() / 2;
    let mut got;
    {
        let (e, rec) = Engine::open_durable(&cfg, &Durable::new(&state)).unwrap();
        assert_eq!(rec.events, 0);
        got = feed(&e, "b", "trace.jsonl", &ls[..half], 1).0;
    }
    {
        let d = Durable { durability: Durability::Batch, ..Durable::new(&state) };
        let (e, rec) = Engine::open_durable(&cfg, &d).unwrap();
        assert!(rec.events > 0);
        assert!(e.stats().durable);
        got.extend(feed(&e, "b", "trace.jsonl", &ls[half..], half + 1).0);
    }
    fs::remove_dir_all(&state).unwrap();
    assert_eq!(got, want);
}

#[test]
fn state_export_import() {
    let Some((policy, ls, want)) = budget_trace() else { return };
    let half = ls.len() / 2;
    let (a, b) = (trace_engine(&policy), trace_engine(&policy));
    let mut got = feed(&a, "b", "trace.jsonl", &ls[..half], 1).0;
    b.import_state(&a.export_state().unwrap()).unwrap();
    got.extend(feed(&b, "b", "trace.jsonl", &ls[half..], half + 1).0);
    assert_eq!(got, want);
}

#[test]
fn reload_swaps_the_policy() {
    let (Some(ex), Some(dwc)) = (examples(), env::var_os("DWC")) else { return };
    let tmp = tmpdir("reload");
    let art = tmp.join("02.dwb");
    let st = Command::new(dwc).arg("compile").arg(ex.join("02-no-deletes/policy.dw")).args(["-s", "box", "-o"])
        .arg(&art).status().unwrap();
    assert!(st.success());
    let reqs: Vec<String> = lines(&ex.join("02-no-deletes/requests.jsonl")).into_iter().filter(|l| !l.is_empty()).collect();
    let want = feed(&Engine::open(ex.join("02-no-deletes/policy.dw"), "box").unwrap(), "b", "requests.jsonl", &reqs, 1).0;
    let e = Engine::open(ex.join("01-project-read/policy.dw"), "box").unwrap();
    let info = e.reload(&fs::read(&art).unwrap()).unwrap();
    assert_eq!(info.generation, 1);
    assert_eq!(feed(&e, "b", "requests.jsonl", &reqs, 1).0, want);
    assert!(e.reload(b"not an artifact").is_err());
    fs::remove_dir_all(&tmp).unwrap();
}

#[test]
fn threads_share_one_engine() {
    let Some(ex) = examples() else { return };
    let reqs: Vec<String> = lines(&ex.join("01-project-read/requests.jsonl")).into_iter().filter(|l| !l.is_empty()).collect();
    let e = Arc::new(Engine::open(ex.join("01-project-read/policy.dw"), "box").unwrap());
    let want: Vec<Verdict> = reqs.iter().map(|r| e.decide_request(r).unwrap()).collect();
    let key = |v: &Verdict| (v.allow, v.cause, v.rules.clone());
    let hs: Vec<_> = (0..4)
        .map(|_| {
            let (e, reqs) = (Arc::clone(&e), reqs.clone());
            thread::spawn(move || {
                (0..20).map(|_| reqs.iter().map(|r| e.decide_request(r).unwrap()).collect::<Vec<_>>()).collect::<Vec<_>>()
            })
        })
        .collect();
    for h in hs {
        for round in h.join().unwrap() {
            assert_eq!(round.iter().map(key).collect::<Vec<_>>(), want.iter().map(key).collect::<Vec<_>>());
        }
    }
}

#[test]
fn load_error_is_text() {
    let tmp = tmpdir("bad");
    let p = tmp.join("bad.dw");
    fs::write(&p, "permit(principal, action, resource)\n  when { context.input.path like };\n").unwrap();
    let err = Engine::open(&p, "box").err().expect("the policy must be refused").0;
    let prefix = format!("{}:2:", p.display());
    assert!(err.starts_with(&prefix) && err.contains(": error: "), "{}", err);
    fs::remove_dir_all(&tmp).unwrap();
}

#[test]
fn version_and_abi() {
    let v = dogwood::version();
    assert_eq!(v.split('.').filter(|p| p.parse::<u32>().is_ok()).count(), 3, "{}", v);
    let Ok(sizes) = env::var("DW_ABI_SIZES") else { return };
    for (name, size) in dogwood_sys::abi_sizes() {
        let want = sizes.split_whitespace().find_map(|kv| kv.strip_prefix(&format!("{}=", name))).unwrap();
        assert_eq!(want.parse::<usize>().unwrap(), size, "{}", name);
    }
}

#[test]
fn gate_failures_deny() {
    let Some(ex) = examples() else { return };
    let e = Engine::open(ex.join("01-project-read/policy.dw"), "box").unwrap();
    let v = e.decide(r#"{"action":"fs:read","kind":"request","input":{"path":"~/project/.env","operation":"read_content"}}"#).unwrap();
    assert_eq!((v.allow, v.cause.as_str(), v.rules.clone()), (false, "forbidden", vec!["no_env".to_string()]));
    for bad in [r#"{"action":"fs:read","kind":"request","input":{"path":"~/project/a.c"}}"#, "{not json"] {
        let v = e.decide(bad).unwrap();
        assert_eq!((v.allow, v.cause.as_str()), (false, "internal_fault"));
        assert!(!v.message.is_empty());
    }
}

#[test]
fn dwd_client_decides_as_the_engine() {
    let (Some(ex), Some(dwd)) = (examples(), env::var_os("DWD")) else { return };
    let tmp = tmpdir("dwd");
    let policy = ex.join("01-project-read/policy.dw");
    let sock = tmp.join("s");
    let mut child = Command::new(dwd).arg("--policy").arg(&policy).args(["--schema", "box", "--state"])
        .arg(tmp.join("st")).arg("--socket").arg(&sock).stderr(Stdio::null()).spawn().unwrap();
    for _ in 0..600 {
        if sock.exists() || child.try_wait().unwrap().is_some() {
            break;
        }
        thread::sleep(Duration::from_millis(50));
    }
    let result = std::panic::catch_unwind(|| {
        let e = Engine::open(&policy, "box").unwrap();
        let mut c = Client::connect(&sock).unwrap();
        let reqs = lines(&ex.join("01-project-read/requests.jsonl"));
        for r in reqs.iter().filter(|l| !l.is_empty()) {
            let want = e.decide_request(r).unwrap();
            let j = json::parse(r).unwrap();
            let action = j.get("action").unwrap().get("id").unwrap().as_str().unwrap();
            let input = j.get("context").unwrap().get("input").unwrap().to_string();
            let got = c.decide(action, &input).unwrap();
            assert_eq!((got.allow, got.cause.as_str(), &got.rules), (want.allow, want.cause.as_str(), &want.rules));
            assert_eq!(got.rule, want.rules.first().cloned().unwrap_or_else(|| "<default-deny>".into()));
        }
        c.record("fs:read", "response", r#"{"path":"~/project/a.c","operation":"read_content"}"#, Some("{}")).unwrap();
        assert_eq!(c.stats().unwrap().get("records").and_then(Value::as_i64), Some(1));
    });
    unsafe { libc_kill(child.id() as i32, 15) };
    let _ = child.wait();
    let _ = fs::remove_dir_all(&tmp);
    if let Err(p) = result {
        std::panic::resume_unwind(p);
    }
}

extern "C" {
    #[link_name = "kill"]
    fn libc_kill(pid: i32, sig: i32) -> i32;
}

/// A host callback in Rust decides (dogwood.md §13.5); its error denies; the deployment switch refuses.
#[test]
fn provider_callback_decides() {
    let d = tmpdir("providers");
    fs::write(d.join("s.cedarschema"), "namespace App {\n  entity User;\n  entity Doc;\n  action \"Read\" appliesTo { \
        principal: [User], resource: [Doc], context: { input: { doc: String } } };\n}\n").unwrap();
    fs::write(d.join("providers.json"), r#"{"availableProviders": {"Content::Filter": {
        "argumentTypes": [{"paramType": "string"}],
        "outputType": {"paramType": "record", "fields": {"flagged": {"paramType": "bool"}}, "required": ["flagged"]}}}}"#)
        .unwrap();
    fs::write(d.join("policy.dw"), "forbid (principal, action, resource) when { Content::Filter(context.input.doc).flagged };\n\
        permit (principal, action, resource) when { Strings::Length(context.input.doc).length < 10 };\n").unwrap();
    let cfg = Config::new(d.join("policy.dw")).schema(d.join("s.cedarschema").to_str().unwrap()).providers(d.join("providers.json"));
    let e = Engine::with_config(&cfg).unwrap();
    let req = |doc: &str| format!(r#"{{"principal":{{"type":"App::User","id":"a"}},"action":{{"type":"App::Action","id":"Read"}},"resource":{{"type":"App::Doc","id":"d"}},"context":{{"input":{{"doc":"{}"}}}}}}"#, doc);
    let v = e.decide_request(&req("hello")).unwrap();
    assert_eq!((v.allow, v.cause.to_string().as_str()), (false, "internal_fault"), "declared, not implemented");
    e.register_provider("Content::Filter", |name, args| {
        assert_eq!(name, "Content::Filter");
        if args.contains("boom") {
            return Err("filter service down".to_string());
        }
        Ok(format!(r#"{{"flagged":{}}}"#, args.contains("hate")))
    })
    .unwrap();
    let v = e.decide_request(&req("hello")).unwrap();
    assert_eq!((v.allow, v.rules.clone()), (true, vec!["policy_1".to_string()]));
    let v = e.decide_request(&req("some hate")).unwrap();
    assert_eq!((v.allow, v.cause.to_string().as_str(), v.rules.clone()), (false, "forbidden", vec!["policy_0".to_string()]));
    let v = e.decide_request(&req("boom")).unwrap();
    assert_eq!((v.allow, v.cause.to_string().as_str()), (false, "internal_fault"));
    assert!(v.message.contains("filter service down"), "{}", v.message);
    drop(e);
    let mut off = cfg.clone();
    off.no_providers = true;
    let err = Engine::with_config(&off).err().expect("refused");
    assert!(err.to_string().contains("information providers are not enabled"), "{}", err);
    let _ = fs::remove_dir_all(&d);
}
