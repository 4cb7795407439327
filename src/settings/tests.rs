//! The settings pipeline end to end (command line and files → `Settings`), and the drift tests
//! of the settings table: the clap flags, the config parser, the layering, `config.checks`,
//! `--help` and the README tables all agree with it.

use super::table::{self, Def, Kind, Layers, Origin, SETTINGS, Setting};
use super::*;
use crate::exit::Failure;
use crate::protocol;
use crate::report::outputs::default_format;
use std::path::Path;

/// The program the tests name as the server (`sh` in their command lines): it must exist.
const SHELL: &str = if cfg!(windows) { "cmd" } else { "sh" };

/// Parses a command line, with [`SHELL`] for `sh`.
pub(crate) fn run(args: &[&str]) -> Result<Settings, Failure> {
    let mut full = vec!["mcp-stdio-guard"];
    full.extend(args.iter().map(|a| if *a == "sh" { SHELL } else { a }));
    match parse(full)? {
        Command::Run(s) => Ok(*s),
        other => panic!("expected a run, got {other:?}"),
    }
}

pub(crate) fn usage_error(args: &[&str]) -> String {
    let err = run(args).expect_err("should fail");
    assert_eq!(err.exit, crate::exit::Exit::Usage);
    assert!(!err.message.contains('\n'), "one line: {:?}", err.message);
    err.message
}

/// A scratch folder for one test, removed when dropped.
struct Scratch(std::path::PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir =
            std::env::temp_dir().join(format!("guard-settings-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    fn write(&self, rel: &str, text: &str) -> String {
        let path = self.0.join(rel);
        std::fs::write(&path, text).unwrap();
        path.display().to_string()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn defaults_are_generous() {
    let s = run(&["--", "sh", "-c", "true"]).unwrap();
    let t = &s.targets[0];
    assert_eq!(t.spec.spawn.limits.max_line_bytes, 4 * 1024 * 1024);
    assert_eq!(t.spec.spawn.limits.max_total_bytes, 64 * 1024 * 1024);
    assert_eq!(t.spec.session.protocol, "2025-11-25");
    assert_eq!(
        t.spec.session.timeout,
        std::time::Duration::from_millis(5000)
    );
    assert!(t.spec.probes.capabilities && t.spec.probes.discover);
    assert_eq!(t.repeat, 1);
    // Text, or `github` when these tests run inside GitHub Actions.
    assert_eq!(s.format, default_format(false));
}

#[test]
fn params_pair_with_the_request_before_them() {
    let s = run(&[
        "--request",
        "tools/list",
        "--request",
        "tools/call",
        "--params",
        r#"{"name":"echo"}"#,
        "--",
        "sh",
    ])
    .unwrap();
    let ops = &s.targets[0].spec.operations;
    assert_eq!(ops.len(), 2);
    assert!(ops[0].params.is_none());
    assert_eq!(ops[1].params.as_ref().unwrap()["name"], "echo");
}

#[test]
fn bad_arguments_are_one_line_usage_errors() {
    assert!(
        usage_error(&["--params", "5", "--request", "x", "--", "sh"]).contains("not a JSON object")
    );
    assert!(
        usage_error(&["--request", "x", "--params", "5", "--", "sh"]).contains("not a JSON object")
    );
    assert!(
        usage_error(&["--request", "x", "--params", "{", "--", "sh"]).contains("not valid JSON")
    );
    assert!(
        usage_error(&["--params", "{}", "--request", "x", "--", "sh"])
            .contains("before any --request")
    );
    assert!(usage_error(&["--bogus", "--", "sh"]).contains("--bogus"));
    assert!(
        usage_error(&["--protocol", "1999-01-01", "--", "sh"]).contains("not a supported revision")
    );
    assert!(usage_error(&["--timeout", "abc", "--", "sh"]).contains("abc"));
    assert!(usage_error(&["--timeout", "0", "--", "sh"]).contains("greater than 0"));
    assert!(usage_error(&["--env", "NOEQUALS", "--", "sh"]).contains("KEY=VALUE"));
    assert!(usage_error(&[]).contains("no server command"));
    assert!(usage_error(&["--", "definitely-not-a-command-xyz"]).contains("command not found"));
    assert!(usage_error(&["--", "/"]).contains("is a directory"));
    assert!(usage_error(&["--cwd", "/nonexistent-dir-xyz", "--", "sh"]).contains("--cwd"));
}

#[test]
fn effects_policy_turns_the_proof_on_and_takes_observe_or_contain() {
    use crate::runtime::effects::syscalls::Policy;
    let policy = |args: &[&str]| {
        run(args).unwrap().targets[0]
            .spec
            .effects
            .clone()
            .map(|e| e.policy)
    };
    assert_eq!(policy(&["--effects", "--", "sh"]), Some(Policy::Contain));
    assert_eq!(
        policy(&["--effects-policy", "observe", "--", "sh"]),
        Some(Policy::Observe)
    );
    assert_eq!(
        policy(&["--effects", "--effects-policy", "contain", "--", "sh"]),
        Some(Policy::Contain)
    );
    assert!(usage_error(&["--effects-policy", "allow", "--", "sh"]).contains("--effects-policy"));
}

#[test]
fn effects_flags_turn_the_proof_on_and_name_variables() {
    let s = run(&["--", "sh"]).unwrap();
    assert!(s.targets[0].spec.effects.is_none());
    assert!(!s.targets[0].spec.unbuffered_rerun);
    let s = run(&["--effects", "--", "sh"]).unwrap();
    let e = s.targets[0].spec.effects.clone().unwrap();
    assert!(e.proxy && e.log && e.watch && e.env.is_empty());
    let s = run(&[
        "--effects-env",
        "API_URL=http://{canary}/v1",
        "--effects-env",
        "OTHER",
        "--",
        "sh",
    ])
    .unwrap();
    let e = s.targets[0].spec.effects.clone().unwrap();
    assert_eq!(
        e.env,
        [
            (
                "API_URL".to_string(),
                Some("http://{canary}/v1".to_string())
            ),
            ("OTHER".to_string(), None)
        ]
    );
    assert!(e.env_names().contains(&"HTTPS_PROXY".to_string()));
    assert!(
        usage_error(&["--effects-env", "API_URL=http://example.com", "--", "sh"])
            .contains("{canary}")
    );
    let s = run(&["--unbuffered-rerun", "--", "sh"]).unwrap();
    assert!(s.targets[0].spec.unbuffered_rerun);
}

#[test]
fn profiles_are_presets_that_flags_narrow_or_deepen() {
    let s = run(&["--profile", "registry", "--", "sh"]).unwrap();
    assert_eq!((s.targets[0].repeat, s.format), (2, Format::Text));
    assert!(s.targets[0].spec.probes.capabilities);
    let s = run(&["--profile", "registry", "--repeat", "1", "--", "sh"]).unwrap();
    assert_eq!(s.targets[0].repeat, 1);
    let s = run(&["--profile", "smoke", "--", "sh"]).unwrap();
    assert!(!s.targets[0].spec.probes.capabilities);
    let s = run(&["--profile", "smoke", "--capability-probes", "--", "sh"]).unwrap();
    assert!(s.targets[0].spec.probes.capabilities);
    let s = run(&["--profile", "ci", "--", "sh"]).unwrap();
    assert_eq!(s.format, Format::Json);
    assert!(s.fail_on_static && s.targets[0].adversarial_probes.is_empty());
    let s = run(&["--profile", "ci", "--format", "text", "--", "sh"]).unwrap();
    assert_eq!(s.format, Format::Text);
    let s = run(&["--profile", "strict", "--", "sh"]).unwrap();
    assert_eq!(
        s.targets[0].adversarial_probes.len(),
        crate::runtime::probes::corpus::PROBES.len()
    );
    assert_eq!(s.targets[0].repeat, 2);
    assert!(s.targets[0].spec.unbuffered_rerun);
    assert!(s.targets[0].spec.adversarial.enabled());
    let s = run(&["--profile", "strict", "--no-unbuffered-rerun", "--", "sh"]).unwrap();
    assert!(!s.targets[0].spec.unbuffered_rerun);
    let s = run(&[
        "--profile",
        "strict",
        "--adversarial-probes",
        "none",
        "--",
        "sh",
    ])
    .unwrap();
    assert!(s.targets[0].adversarial_probes.is_empty());
    let s = run(&[
        "--adversarial-probes",
        "invalid-method,notification",
        "--adversarial-probe",
        "invalid-method",
        "--",
        "sh",
    ])
    .unwrap();
    assert_eq!(
        s.targets[0].adversarial_probes,
        ["invalid-method", "notification"]
    );
    assert!(usage_error(&["--profile", "fast", "--", "sh"]).contains("unknown"));
    assert!(usage_error(&["--tool-name-rule", "loose", "--", "sh"]).contains("loose"));
    assert!(usage_error(&["--repeat", "0", "--", "sh"]).contains("out of range"));
    assert!(usage_error(&["--adversarial-probe", "fuzz", "--", "sh"]).contains("fuzz"));
    assert!(usage_error(&["--server", "x", "--", "sh"]).contains("--mcp-config"));
}

#[test]
fn protocol_all_expands_into_one_target_per_legacy_revision() {
    let s = run(&["--protocol", "all", "--", "sh", "-c", "true"]).unwrap();
    let revs: Vec<&str> = s
        .targets
        .iter()
        .map(|t| t.spec.session.protocol.as_str())
        .collect();
    assert_eq!(revs, protocol::LEGACY_REVISIONS);
    assert_eq!(s.targets[3].name, format!("{SHELL} -c true @ 2025-11-25"));
    let s = run(&[
        "--no-discover",
        "--max-pages",
        "7",
        "--tool-name-rule",
        "strict-client",
        "--",
        "sh",
    ])
    .unwrap();
    let p = &s.targets[0].spec.probes;
    assert!(!p.discover);
    assert_eq!(p.max_pages, 7);
    assert_eq!(
        p.name_rule,
        crate::runtime::checks::tools::NameRule::StrictClient
    );
}

#[test]
fn help_and_version_are_printed_not_failed() {
    assert!(matches!(
        parse(["mcp-stdio-guard", "--help"]),
        Ok(Command::Print(_))
    ));
    match parse(["mcp-stdio-guard", "--version"]) {
        Ok(Command::Print(text)) => assert!(text.contains(crate::VERSION)),
        other => panic!("{other:?}"),
    }
}

#[test]
fn explain_is_a_subcommand() {
    assert!(matches!(
        parse([
            "mcp-stdio-guard",
            "explain",
            crate::catalog::runtime::STDOUT_NON_JSON.code
        ]),
        Ok(Command::Explain(Some(_)))
    ));
}

#[test]
fn report_files_are_checked_before_anything_runs() {
    let s = run(&[
        "--format",
        "sarif",
        "--sarif",
        "/tmp/x.sarif",
        "--junit",
        "j.xml",
        "--",
        "sh",
    ])
    .unwrap();
    assert_eq!(s.format, Format::Sarif);
    let sarif = s.outputs.sarif.as_deref().unwrap();
    if cfg!(unix) {
        assert_eq!(sarif, Path::new("/tmp/x.sarif"));
    } else {
        // `Z:\tmp\x.sarif`: absolute on the current drive.
        assert!(
            sarif.is_absolute() && sarif.ends_with("tmp/x.sarif"),
            "{sarif:?}"
        );
    }
    assert!(s.outputs.junit.as_ref().unwrap().is_absolute());
    assert_eq!(s.outputs.json, None);
    assert!(
        usage_error(&["--sarif", "/nonexistent-dir-xyz/a.sarif", "--", "sh"])
            .contains("does not exist")
    );
    assert!(usage_error(&["--junit", "/", "--", "sh"]).contains("is a folder"));
    assert!(
        usage_error(&["--sarif", "a.out", "--json-file", "./a.out", "--", "sh"])
            .contains("its own file")
    );
    assert!(usage_error(&["--format", "xml", "--", "sh"]).contains("xml"));
    match parse([
        "mcp-stdio-guard",
        "scan",
        "--format",
        "junit",
        "--sarif",
        "/tmp/s.sarif",
    ]) {
        Ok(Command::Scan(scan)) => {
            assert_eq!(scan.format, Format::Junit);
            assert!(scan.outputs.sarif.is_some());
        }
        other => panic!("{other:?}"),
    }
}

// ------------------------------------------------------------------ the table and what derives from it

/// Every flag of a run is a row of the table (or the command itself), and every flag a row names
/// exists (with the type its kind reads).
#[test]
fn every_run_flag_is_a_row_and_every_row_flag_exists() {
    let cmd = command();
    let named: Vec<&str> = SETTINGS
        .iter()
        .flat_map(|s| s.flags.iter().copied().chain([s.negation]))
        .filter(|id| !id.is_empty())
        .collect();
    for arg in cmd.get_arguments() {
        let id = arg.get_id().as_str();
        if ["help", "version", "command"].contains(&id) {
            continue;
        }
        assert!(named.contains(&id), "--{id} is not in the settings table");
    }
    for id in &named {
        let arg = cmd
            .get_arguments()
            .find(|a| a.get_id() == *id)
            .unwrap_or_else(|| panic!("the table names --{id}, which clap does not have"));
        let help = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
        assert!(!help.is_empty(), "--{id} has no help");
    }
    let mut sorted = named.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), named.len(), "a flag is named by two rows");
}

/// A valid config value of `s` for the tests, and a second, different one.
fn samples(s: &Setting) -> Option<(serde_json::Value, serde_json::Value)> {
    use serde_json::json;
    let choice = |i: usize| s.choices.map(|c| c()[i]).unwrap_or(["a", "b"][i]);
    Some(match s.kind {
        Kind::Bool => (json!(true), json!(false)),
        Kind::Count | Kind::Bytes => (json!(7), json!(9)),
        Kind::Text => (json!(choice(0)), json!(choice(1))),
        Kind::Path => (json!("."), json!("sub")),
        Kind::Custom(_) | Kind::Other | Kind::Flag => return None,
    })
}

/// The parser knows exactly the table's keys, checks each by its kind and names the key in its
/// errors; `known_keys` is the table.
#[test]
fn the_config_parser_reads_every_key_of_the_table() {
    let keys: Vec<&str> = table::known_keys().collect();
    let mut sorted = keys.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), keys.len(), "a key is named twice");
    for s in SETTINGS.iter().filter(|s| !s.key.is_empty()) {
        assert_eq!(table::by_key(s.key), Some(*s));
        let Some((a, _)) = samples(s) else { continue };
        let cfg = file::parse(
            &serde_json::json!({ s.key: a }).to_string(),
            Path::new("/cfg"),
        )
        .unwrap_or_else(|e| panic!("{}: {e}", s.key));
        assert!(cfg.has(s), "{} was parsed but not kept", s.key);
        let err = file::parse(
            &serde_json::json!({ s.key: [] }).to_string(),
            Path::new("/cfg"),
        )
        .expect_err(s.key);
        assert!(err.contains(&format!("{:?}", s.key)), "{err}");
    }
    let err = file::parse(r#"{"nope": 1}"#, Path::new("/cfg")).unwrap_err();
    for key in keys.iter().filter(|k| **k != "$schema") {
        assert!(
            err.contains(key),
            "the unknown-key error omits {key}: {err}"
        );
    }
}

/// Every row with a key and a flag is layered the same way: the flag over the config file over
/// the profile over the default.
#[test]
fn every_setting_layers_flag_over_config_over_profile_over_default() {
    for s in SETTINGS.iter().copied() {
        let Some((a, b)) = samples(s) else { continue };
        let flag = s
            .flags
            .first()
            .or(Some(&s.negation).filter(|n| !n.is_empty()));
        let flag_args: Vec<String> = match (flag, s.kind) {
            (None, _) => Vec::new(),
            (Some(id), Kind::Bool) => vec![format!("--{}", id.replace('_', "-"))],
            (Some(id), _) => vec![
                format!("--{}", id.replace('_', "-")),
                b.as_str()
                    .map(String::from)
                    .unwrap_or_else(|| b.to_string()),
            ],
        };
        let flag_value = |m: &clap::ArgMatches| {
            Layers {
                matches: m,
                config: &file::FileConfig::default(),
                profile: Profile::Custom,
            }
            .get(s)
        };
        let matches = |extra: &[String]| {
            let mut argv = vec!["mcp-stdio-guard".to_string()];
            argv.extend(extra.iter().cloned());
            command().try_get_matches_from(argv).expect("flags parse")
        };
        let none = matches(&[]);
        for profile in [
            Profile::Custom,
            Profile::Smoke,
            Profile::Registry,
            Profile::Ci,
            Profile::Strict,
        ] {
            let l = Layers {
                matches: &none,
                config: &file::FileConfig::default(),
                profile,
            };
            let want: Option<file::Parsed> = s.default_for(profile).into();
            assert_eq!(l.get(s).map(|(v, _)| v), want, "{s:?} in {profile:?}");
        }
        if !flag_args.is_empty() {
            let m = matches(&flag_args);
            let (v, origin) =
                flag_value(&m).unwrap_or_else(|| panic!("{s:?}: the flag is not read"));
            assert_eq!(origin, Origin::Flag, "{s:?}");
            if s.key.is_empty() {
                continue;
            }
            // The config says the opposite of the flag: the flag wins.
            let opposite = if matches!(s.kind, Kind::Bool) {
                serde_json::Value::Bool(!matches!(v, file::Parsed::Bool(true)))
            } else {
                a.clone()
            };
            let cfg = file::parse(
                &serde_json::json!({ s.key: opposite }).to_string(),
                Path::new("/cfg"),
            )
            .unwrap();
            let l = Layers {
                matches: &m,
                config: &cfg,
                profile: Profile::Strict,
            };
            assert_eq!(
                l.get(s),
                Some((v, Origin::Flag)),
                "{s:?}: the flag must win"
            );
            let l = Layers {
                matches: &none,
                config: &cfg,
                profile: Profile::Strict,
            };
            assert_eq!(
                l.get(s).map(|(_, o)| o),
                Some(Origin::Config),
                "{s:?}: the config must win over the profile"
            );
        }
    }
}

/// The report's `config.checks` block is the table's `checks` column, in the order and with the
/// keys the JSON contract requires.
#[test]
fn config_checks_are_the_tables_in_the_contracts_order() {
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/docs/report.schema.json"
        ))
        .unwrap(),
    )
    .unwrap();
    let required: Vec<&str> = schema["$defs"]["configInfo"]["properties"]["checks"]["required"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    let info = target::config_info(None);
    let names: Vec<&str> = info.checks.iter().map(|(n, _)| n.as_ref()).collect();
    assert_eq!(names, required);
    let cfg = file::parse(
        r#"{"command": ["x"], "env": {"A": "1"}, "request": "ping", "requests": ["tools/list"], "adversarialProbes": "crlf"}"#,
        Path::new("/cfg"),
    )
    .unwrap();
    let info = target::config_info(Some(&cfg));
    let value = |n: &str| info.checks.iter().find(|(k, _)| k == n).unwrap().1.clone();
    assert_eq!(value("command"), serde_json::json!(true));
    assert_eq!(value("cwd"), serde_json::json!(false));
    assert_eq!(value("envNames"), serde_json::json!(["A"]));
    assert_eq!(value("requests"), serde_json::json!(["ping", "tools/list"]));
    assert_eq!(value("adversarialProbes"), serde_json::json!(["crlf"]));
}

/// `--help` says what the table says, with each default and the probe names of the probe table.
#[test]
fn help_is_the_tables() {
    let help = command().render_long_help().to_string();
    let flat = help.split_whitespace().collect::<Vec<_>>().join(" ");
    for s in SETTINGS.iter().filter(|s| !s.flags.is_empty()) {
        let line = table::help_line(s.doc);
        let words: Vec<&str> = line.split_whitespace().take(6).collect();
        assert!(
            flat.contains(&words.join(" ")),
            "--help lacks the doc of {s:?}: {:?}",
            words.join(" ")
        );
    }
    for p in crate::runtime::probes::corpus::PROBES {
        assert!(flat.contains(p.name), "--help lacks the probe {}", p.name);
    }
    assert!(flat.contains("[default: 5000]"), "{flat}");
    assert!(flat.contains("[config: timeoutMs]"), "{flat}");
}

/// The README's option and config-key tables are generated from the table:
/// `UPDATE_GOLDEN=1 cargo test` rewrites them.
#[test]
fn the_readme_tables_are_generated() {
    crate::readme::check_section("options", &table::options_markdown(&command()));
    crate::readme::check_section("config-keys", &table::keys_markdown());
}

/// Every row's built-in default is of its kind, and so is every profile default.
#[test]
fn defaults_have_the_rows_kind() {
    for s in SETTINGS.iter().copied() {
        for d in std::iter::once(s.default).chain(s.profiles.iter().map(|(_, d)| *d)) {
            let ok = matches!(
                (s.kind, d),
                (_, Def::None)
                    | (Kind::Bool, Def::Bool(_))
                    | (Kind::Count | Kind::Bytes, Def::Count(_))
                    | (Kind::Text, Def::Text(_))
                    | (Kind::Custom(_), _)
            );
            assert!(ok, "{s:?} has the default {d:?}");
        }
        if let (Some(choices), Def::Text(t)) = (s.choices, s.default) {
            assert!(
                choices().contains(&t),
                "{s:?}: the default {t} is not a choice"
            );
        }
    }
}

// ------------------------------------------------------------------ invocation-wide settings

/// Invocation-wide settings (format, outputs, scan, failOnStatic, jobs) come from the flags and
/// the run's own config file once, never from the first of several servers' configs; each
/// server keeps its own per-target settings.
#[test]
fn invocation_wide_settings_are_resolved_once_not_from_the_first_source() {
    let s = Scratch::new("invocation");
    std::fs::create_dir_all(s.0.join("src")).unwrap();
    let a = s.write(
        "a.json",
        &serde_json::json!({"command": [SHELL], "json": true, "timeoutMs": 1111, "scan": "src", "profile": "ci"}).to_string(),
    );
    let b = s.write(
        "b.json",
        &serde_json::json!({"command": [SHELL], "timeoutMs": 2222}).to_string(),
    );
    // Several servers: the first config's json, scan and profile do not set the run's output.
    let settings = run(&["--config", &a, "--config", &b]).unwrap();
    assert_eq!(settings.format, default_format(false));
    assert_eq!(settings.scan, None);
    assert!(!settings.fail_on_static);
    let timeouts: Vec<u128> = settings
        .targets
        .iter()
        .map(|t| t.spec.session.timeout.as_millis())
        .collect();
    assert_eq!(timeouts, [1111, 2222]);
    assert_eq!(settings.targets[0].profile, Profile::Ci);
    assert_eq!(settings.targets[1].profile, Profile::Custom);
    let notes = settings.notes.join("\n");
    assert!(
        notes.contains("config \"json\" is ignored when several servers are checked"),
        "{notes}"
    );
    assert!(
        notes.contains("config \"scan\" paths are ignored"),
        "{notes}"
    );
    assert!(
        notes.contains("profile \"ci\" does not set --fail-on-static"),
        "{notes}"
    );
    // The order of the sources changes nothing.
    let swapped = run(&["--config", &b, "--config", &a]).unwrap();
    assert_eq!(swapped.format, settings.format);
    assert_eq!(swapped.scan, None);
    // One config file is the run's own: its json, scan and profile apply.
    let one = run(&["--config", &a]).unwrap();
    assert_eq!(one.format, Format::Json);
    assert_eq!(one.scan, Some(s.0.join("src")));
    assert!(one.fail_on_static);
    assert!(one.notes.is_empty(), "{:?}", one.notes);
    // A config shared by several client configs is the run's own too.
    let shared = s.write("shared.json", r#"{"json": true, "timeoutMs": 3333}"#);
    let mcp = s.write(
        "mcp.json",
        &serde_json::json!({"mcpServers": {"x": {"command": SHELL}}}).to_string(),
    );
    let settings = run(&[
        "--config",
        &shared,
        "--mcp-config",
        &mcp,
        "--mcp-config",
        &mcp,
    ])
    .unwrap();
    assert_eq!(settings.format, Format::Json);
    assert_eq!(settings.targets.len(), 2);
    assert!(
        settings
            .targets
            .iter()
            .all(|t| t.spec.session.timeout.as_millis() == 3333)
    );
    // Flags set the whole run whatever the configs say.
    let settings = run(&["--config", &a, "--config", &b, "--format", "sarif"]).unwrap();
    assert_eq!(settings.format, Format::Sarif);
}

/// `jobs` in the run's own config file: a CI job keeps its parallelism next to its registry list;
/// the flag wins, a server's own config among several cannot set it.
#[test]
fn the_config_file_sets_jobs() {
    let s = Scratch::new("jobs");
    let shared = s.write("shared.json", r#"{"jobs": 3}"#);
    let list = s.write(
        "servers.jsonl",
        &(serde_json::json!({"command": [SHELL]}).to_string() + "\n"),
    );
    assert_eq!(
        run(&["--config", &shared, "--registry", &list])
            .unwrap()
            .jobs,
        3
    );
    let flagged = run(&["--config", &shared, "--registry", &list, "--jobs", "5"]).unwrap();
    assert_eq!(flagged.jobs, 5);
    let a = s.write(
        "a.json",
        &serde_json::json!({"command": [SHELL], "jobs": 2}).to_string(),
    );
    let b = s.write(
        "b.json",
        &serde_json::json!({"command": [SHELL]}).to_string(),
    );
    let several = run(&["--config", &a, "--config", &b]).unwrap();
    assert_eq!(several.jobs, default_jobs());
    assert!(
        several
            .notes
            .iter()
            .any(|n| n.contains("config \"jobs\" is ignored")),
        "{:?}",
        several.notes
    );
    assert!(
        usage_error(&[
            "--config",
            &s.write("zero.json", r#"{"command": ["sh"], "jobs": 0}"#)
        ])
        .contains("\"jobs\" must be greater than 0")
    );
    assert!(
        usage_error(&[
            "--config",
            &s.write("many.json", r#"{"command": ["sh"], "jobs": 2000}"#)
        ])
        .contains("out of range")
    );
}
