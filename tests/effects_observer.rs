//! The system-call observer against real processes: servers whose effects no cooperative channel
//! sees (Node 20's `fetch`, Python's `http.client`, a helper that lives a millisecond), in an
//! acts-first and a validates-first build each (tests/fixtures/servers/effects/). Also: the
//! filter reaches grandchildren and leaves with the run, `contain` keeps a probe's connection
//! from a listener on 127.0.0.1 that `observe` lets through, and the fallback is reported when
//! the observer is switched off.
//!
//! No test needs the network: the fixtures that look up a host run inside a network namespace
//! of their own (`unshare --net`, loopback only), where a lookup fails at once — the attempt is
//! the evidence. Where no namespace can be made, those tests say loudly that they were skipped.
#![cfg(target_os = "linux")]

mod support;

use serde_json::Value;
use std::io::BufRead;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use support::*;

const OBSERVER_SWITCH: &str = "MCP_STDIO_GUARD_NO_SYSCALL_OBSERVER";

/// Writes past libtest's capture: a skip must show in every log.
fn loud(text: &str) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr(), "{text}");
}

fn fixtures() -> PathBuf {
    repo().join("tests/fixtures/servers/effects")
}

/// The real interpreter (not a pyenv shim: its launcher chain would fill the start-up effects).
fn python() -> String {
    let out = Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .expect("python3 runs");
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// How to run a command in a network namespace with only loopback, if this machine can make one.
fn isolation() -> Option<Vec<String>> {
    for prefix in [
        &["unshare", "--net"][..],
        &["unshare", "--map-root-user", "--net"][..],
    ] {
        let mut argv: Vec<String> = prefix.iter().map(|s| s.to_string()).collect();
        argv.extend(
            ["sh", "-c", "ip link set lo up && exec \"$@\"", "sh"]
                .iter()
                .map(|s| s.to_string()),
        );
        let ok = Command::new(&argv[0])
            .args(&argv[1..])
            .arg("true")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if ok {
            return Some(argv);
        }
    }
    None
}

/// The TypeScript SDK, or `None` when `MCP_GUARD_SKIP_SDK=1` asks to skip (anything else
/// missing fails with the command that installs it).
fn node_sdk(test: &str) -> bool {
    if std::env::var_os("MCP_GUARD_SKIP_SDK").is_some_and(|v| v == "1") {
        loud(&format!(
            "\n**** SKIPPED {test}: MCP_GUARD_SKIP_SDK=1, the observer was NOT tested on a TypeScript SDK server ****\n"
        ));
        return false;
    }
    let sdk = repo().join("tests/sdk/node/node_modules/@modelcontextprotocol/sdk/package.json");
    assert!(
        sdk.exists(),
        "missing test dependency {}: run scripts/install-test-deps node_sdk; MCP_GUARD_SKIP_SDK=1 skips this test",
        sdk.display()
    );
    true
}

struct Outcome {
    json: Value,
    stderr: String,
}

/// Runs the guard (JSON report) in the fixtures folder, inside `wrap` when given.
fn run(wrap: Option<&[String]>, args: &[&str], envs: &[(&str, String)]) -> Outcome {
    let guard = GUARD.to_string();
    let mut argv: Vec<String> = wrap.map(|w| w.to_vec()).unwrap_or_default();
    argv.push(guard);
    argv.push("--json".into());
    argv.extend(args.iter().map(|s| s.to_string()));
    let mut cmd = Command::new(&argv[0]);
    cmd.args(&argv[1..])
        .current_dir(fixtures())
        .stdin(Stdio::null())
        .env_remove(OBSERVER_SWITCH)
        .env_remove("GITHUB_ACTIONS");
    for (k, v) in envs {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("the guard runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let json = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}\nstderr: {stderr}"));
    Outcome { json, stderr }
}

fn issues(json: &Value) -> Vec<&Value> {
    json["issues"]
        .as_array()
        .map(|a| a.iter().collect())
        .unwrap_or_default()
}

fn errors<'a>(json: &'a Value, code: &str) -> Vec<&'a Value> {
    issues(json)
        .into_iter()
        .filter(|i| i["code"] == code)
        .collect()
}

fn observer(json: &Value, name: &str) -> Value {
    json["effects"]["observers"]
        .as_array()
        .and_then(|a| a.iter().find(|o| o["name"] == name))
        .cloned()
        .unwrap_or(Value::Null)
}

/// The acts-first build fails with a DNS finding for every invalid-arguments probe, naming the
/// probe, the name looked up and the time; the validates-first build passes, and its safe call's
/// lookup is listed under the operation.
fn check_pair(wrap: &[String], command: &[&str], label: &str) {
    let base = [
        "--profile",
        "strict",
        "--effects",
        "--config",
        "gateway.config.json",
        "--",
    ];
    let with = |build: &str| -> Vec<String> {
        let mut a: Vec<String> = base.iter().map(|s| s.to_string()).collect();
        a.extend(command.iter().map(|s| s.to_string()));
        a.push(build.into());
        a
    };
    let acts_args = with("acts-first");
    let good_args = with("validates-first");
    let (acts, good) = std::thread::scope(|s| {
        let a = s.spawn(|| {
            let v: Vec<&str> = acts_args.iter().map(String::as_str).collect();
            run(Some(wrap), &v, &[])
        });
        let g = s.spawn(|| {
            let v: Vec<&str> = good_args.iter().map(String::as_str).collect();
            run(Some(wrap), &v, &[])
        });
        (a.join().unwrap(), g.join().unwrap())
    });

    let j = &acts.json;
    assert_eq!(j["ok"], false, "{label} acts-first: {}", acts.stderr);
    assert_eq!(
        observer(j, "syscalls")["ran"],
        true,
        "{label}: {}",
        j["effects"]
    );
    let dns = errors(j, "adversarial-side-effect-network");
    let probes: Vec<&Value> = j["adversarial"]["probes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| {
            p["name"]
                .as_str()
                .unwrap()
                .starts_with("invalid-arguments:deploy-preview:")
        })
        .collect();
    assert!(probes.len() >= 4, "{label}: {probes:?}");
    for p in &probes {
        let name = p["name"].as_str().unwrap();
        let found = dns
            .iter()
            .find(|i| {
                i["message"]
                    .as_str()
                    .unwrap()
                    .contains(&format!("probe {name}:"))
            })
            .unwrap_or_else(|| panic!("{label}: no network finding for {name}: {dns:?}"));
        let message = found["message"].as_str().unwrap();
        assert_eq!(found["detailCode"], "dns", "{label}: {message}");
        assert!(message.contains("api.deploy.invalid"), "{label}: {message}");
        assert!(
            message.contains("refused by the guard"),
            "{label}: {message}"
        );
        assert!(
            message.contains(" ms after the request tools/call"),
            "{label}: {message}"
        );
        let effect = &found["effect"];
        assert!(
            effect["atMs"].is_u64() && effect["afterMs"].is_u64(),
            "{label}: {found}"
        );
        assert_eq!(p["status"], "fail", "{label}: {p}");
    }
    // The framing probes never reach the executor of this build.
    assert!(dns.iter().all(|i| {
        i["message"]
            .as_str()
            .unwrap()
            .contains("invalid-arguments:")
    }));

    let g = &good.json;
    let errs: Vec<&Value> = issues(g)
        .into_iter()
        .filter(|i| i["severity"] == "error")
        .collect();
    assert!(
        errs.is_empty(),
        "{label} validates-first: {errs:?}\n{}",
        good.stderr
    );
    assert_eq!(g["ok"], true, "{label} validates-first");
    assert_eq!(g["effects"]["duringProbes"], 0, "{label}");
    let own: Vec<&Value> = g["operations"][0]["effects"]
        .as_array()
        .unwrap()
        .iter()
        .collect();
    assert!(
        own.iter()
            .any(|e| e["kind"] == "dns" && e["phase"] == "operation"),
        "{label}: the safe call's lookup is its own effect: {own:?}"
    );
    assert!(
        errors(g, "effects-recorder-unproven").is_empty(),
        "{label}: the observer saw the safe call"
    );
}

#[test]
fn node_fetch_to_a_hostname_before_validation_fails_and_after_it_passes() {
    if !node_sdk("node_fetch_to_a_hostname_before_validation_fails_and_after_it_passes") {
        return;
    }
    let Some(wrap) = isolation() else {
        loud(
            "\n**** SKIPPED node fetch pair: no network namespace (unshare --net) on this machine, and the test must not look up names on a real network ****\n",
        );
        return;
    };
    check_pair(&wrap, &["node", "fetch_gateway.mjs"], "node fetch");
}

#[test]
fn python_http_client_ignoring_proxies_fails_before_validation_and_passes_after() {
    let Some(wrap) = isolation() else {
        loud(
            "\n**** SKIPPED python http.client pair: no network namespace (unshare --net) on this machine ****\n",
        );
        return;
    };
    let py = python();
    check_pair(
        &wrap,
        &[&py, "acts_gateway.py", "http"],
        "python http.client",
    );
}

/// A helper that exits within a millisecond or two, started before validation, is recorded with
/// its full argv by every probe of every run: 20 runs out of 20.
#[test]
fn a_helper_living_a_millisecond_is_recorded_with_its_argv_every_time() {
    let py = python();
    let runs = 20;
    let failures = Arc::new(Mutex::new(Vec::new()));
    let next = Arc::new(Mutex::new(0));
    std::thread::scope(|s| {
        for _ in 0..4 {
            let (failures, next, py) = (failures.clone(), next.clone(), py.clone());
            s.spawn(move || {
                loop {
                    let n = {
                        let mut n = next.lock().unwrap();
                        *n += 1;
                        *n
                    };
                    if n > runs {
                        return;
                    }
                    let out = run(
                        None,
                        &[
                            "--effects",
                            "--adversarial-probe",
                            "invalid-method",
                            "--config",
                            "gateway.config.json",
                            "--",
                            &py,
                            "acts_gateway.py",
                            "spawn",
                            "acts-first",
                        ],
                        &[],
                    );
                    if let Err(why) = helper_seen(&out.json) {
                        failures.lock().unwrap().push(format!("run {n}: {why}"));
                    }
                }
            });
        }
    });
    let failures = failures.lock().unwrap();
    assert!(
        failures.is_empty(),
        "{} of {runs} runs: {failures:#?}",
        failures.len()
    );
}

fn helper_seen(j: &Value) -> Result<(), String> {
    let probes: Vec<&Value> = j["adversarial"]["probes"]
        .as_array()
        .ok_or("no probes")?
        .iter()
        .filter(|p| {
            p["name"]
                .as_str()
                .unwrap()
                .starts_with("invalid-arguments:")
        })
        .collect();
    if probes.len() < 4 {
        return Err(format!("{} invalid-arguments probes", probes.len()));
    }
    for p in probes {
        let execs: Vec<&Value> = p["effects"]
            .as_array()
            .ok_or("no effects")?
            .iter()
            .filter(|e| e["kind"] == "exec")
            .collect();
        let [e] = execs.as_slice() else {
            return Err(format!(
                "{}: {} execs: {}",
                p["name"],
                execs.len(),
                p["effects"]
            ));
        };
        let argv: Vec<&str> = e["detail"]["argv"]
            .as_array()
            .ok_or("no argv")?
            .iter()
            .filter_map(Value::as_str)
            .collect();
        if argv.len() != 5 || argv[..3] != ["ssh", "-o", "BatchMode=yes"] || argv[4] != "uptime" {
            return Err(format!("{}: argv {argv:?}", p["name"]));
        }
        let resolved = e["detail"]["resolved"].as_str().unwrap_or("");
        if !resolved.ends_with("/true") {
            return Err(format!("{}: resolved {resolved:?}", p["name"]));
        }
        if !p["issueCodes"]
            .as_array()
            .is_some_and(|c| c.contains(&Value::from("adversarial-side-effect-process")))
        {
            return Err(format!("{}: {}", p["name"], p["issueCodes"]));
        }
    }
    Ok(())
}

/// The filter is on the server, its children and grandchildren (a detached one too), never on a
/// thread of the guard, and it leaves with the run: the detached process is gone afterwards.
#[test]
fn the_filter_reaches_grandchildren_and_leaves_with_the_run() {
    let py = python();
    let out = run(
        None,
        &[
            "--effects",
            "--config",
            "gateway.config.json",
            "--",
            &py,
            "acts_gateway.py",
            "lineage",
            "validates-first",
        ],
        &[],
    );
    let j = &out.json;
    let events: Vec<&Value> = j["effects"]["events"].as_array().unwrap().iter().collect();
    let logged = |action: &str| -> Value {
        events
            .iter()
            .find(|e| e["kind"] == "logged" && e["detail"]["action"] == action)
            .map(|e| e["detail"].clone())
            .unwrap_or_else(|| panic!("no {action} line: {events:?}"))
    };
    // Seccomp mode 2 is "filter"; 0 none.
    let guard = logged("guard-threads");
    let threads = guard["seccomp"].as_array().unwrap();
    assert!(
        !threads.is_empty() && threads.iter().all(|s| s == "0"),
        "{guard}"
    );
    assert_eq!(logged("server")["seccomp"], "2");
    assert_eq!(logged("grandchild")["seccomp"], "2");
    let sleeper = logged("sleeper");
    assert_eq!(sleeper["seccomp"], "2", "{sleeper}");
    let server_pid = j["pid"].as_u64().or(j["process"]["pid"].as_u64());
    let grandchild = events
        .iter()
        .find(|e| {
            e["kind"] == "exec"
                && e["detail"]["argv"] == serde_json::json!(["true", "grandchild-exec"])
        })
        .unwrap_or_else(|| panic!("the grandchild's exec was not trapped: {events:?}"));
    assert_ne!(grandchild["detail"]["pid"].as_u64(), server_pid);
    let pid = sleeper["pid"].as_u64().unwrap();
    assert!(
        !std::path::Path::new(&format!("/proc/{pid}")).exists()
            || std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .is_ok_and(|s| s.contains(") Z")),
        "the detached sleeper {pid} outlived the run"
    );
}

/// A line server on 127.0.0.1 that keeps every line it is sent.
fn listener() -> (u16, Arc<Mutex<Vec<String>>>) {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let lines = Arc::new(Mutex::new(Vec::new()));
    let keep = lines.clone();
    std::thread::spawn(move || {
        for stream in l.incoming().flatten() {
            let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
            let mut line = String::new();
            let _ = std::io::BufReader::new(stream).read_line(&mut line);
            keep.lock().unwrap().push(line.trim().to_string());
        }
    });
    (port, lines)
}

#[test]
fn contain_keeps_a_probes_connection_from_the_listener_and_observe_lets_it_through() {
    let py = python();
    for policy in ["contain", "observe"] {
        let (port, lines) = listener();
        let out = run(
            None,
            &[
                "--effects",
                "--effects-policy",
                policy,
                "--adversarial-probe",
                "invalid-method",
                "--config",
                "gateway.config.json",
                "--",
                &py,
                "acts_gateway.py",
                "tcp",
                "acts-first",
            ],
            &[("DEPLOY_API_PORT", port.to_string())],
        );
        let j = &out.json;
        let found = errors(j, "adversarial-side-effect-network");
        assert!(found.len() >= 4, "{policy}: {found:?}\n{}", out.stderr);
        let port_text = format!("127.0.0.1:{port}");
        for f in &found {
            let m = f["message"].as_str().unwrap();
            assert_eq!(f["detailCode"], "connect", "{m}");
            assert!(m.contains(&port_text), "{m}");
            assert_eq!(
                m.contains("refused by the guard"),
                policy == "contain",
                "{m}"
            );
        }
        // Give the listener a moment to read what reached it.
        std::thread::sleep(Duration::from_millis(200));
        let got = lines.lock().unwrap().clone();
        let valid = r#"DEPLOY {"target": "preview-42"}"#;
        let invalid: Vec<&String> = got.iter().filter(|l| l.as_str() != valid).collect();
        // The main run's safe call is not a probe: it reaches the listener under both policies.
        assert!(got.iter().any(|l| l == valid), "{policy}: {got:?}");
        if policy == "contain" {
            assert!(
                invalid.is_empty(),
                "contain let probes through: {invalid:?}"
            );
        } else {
            assert!(invalid.len() >= 4, "observe: {got:?}");
        }
    }
}

#[test]
fn the_fallback_is_reported_when_the_observer_is_switched_off() {
    let py = python();
    let out = run(
        None,
        &[
            "--effects",
            "--adversarial-probe",
            "invalid-method",
            "--config",
            "gateway.config.json",
            "--",
            &py,
            "acts_gateway.py",
            "spawn",
            "validates-first",
        ],
        &[(OBSERVER_SWITCH, "1".into())],
    );
    let j = &out.json;
    let syscalls = observer(j, "syscalls");
    assert_eq!(syscalls["ran"], false, "{}", j["effects"]);
    assert!(
        syscalls["reason"]
            .as_str()
            .unwrap()
            .contains("disabled by MCP_STDIO_GUARD_NO_SYSCALL_OBSERVER"),
        "{syscalls}"
    );
    assert_eq!(observer(j, "processWatch")["ran"], true);
    assert_eq!(observer(j, "canary")["ran"], true);
    assert_eq!(observer(j, "effectsLog")["ran"], true);
    let warning = errors(j, "effects-syscall-observer-unavailable");
    assert_eq!(warning.len(), 1, "{:?}", issues(j));
    assert_eq!(warning[0]["severity"], "warning");
    let m = warning[0]["message"].as_str().unwrap();
    assert!(m.contains("the process watch"), "{m}");
    assert_eq!(j["effects"]["channels"]["syscalls"], false);
}
