//! The no-effect proof's settings (`--effects`, `--effects-env`, `--effects-policy`, config
//! `effects`): the flags and the config object merged into one [`EffectsSpec`].

use crate::exit::Failure;
use crate::runtime::effects::EffectsSpec;
use serde_json::Value;

/// `--effects-policy` over the config's `effects.policy`; the flag turns the proof on by itself.
pub(super) fn effects_policy(spec: Option<EffectsSpec>, flag: Option<&str>) -> Option<EffectsSpec> {
    let Some(policy) = flag.and_then(crate::runtime::effects::syscalls::Policy::parse) else {
        return spec;
    };
    Some(EffectsSpec {
        policy,
        ..spec.unwrap_or_default()
    })
}

/// The no-effect proof's settings: `--effects`/`--effects-env`, else config `effects` (`true`,
/// `false`, or `{"proxy", "log", "processWatch", "env"}` where `env` is a list of names or an
/// object of name → template). `--effects-env` turns the proof on by itself.
pub(super) fn effects_spec(
    flag: bool,
    cli_env: &[String],
    file: Option<&Value>,
) -> Result<Option<EffectsSpec>, Failure> {
    let mut spec = match file {
        None | Some(Value::Bool(false)) if !flag && cli_env.is_empty() => return Ok(None),
        None | Some(Value::Bool(_)) => EffectsSpec::default(),
        Some(Value::Object(obj)) => {
            let mut spec = EffectsSpec::default();
            for (key, value) in obj {
                let want_bool = |v: &Value| {
                    v.as_bool().ok_or_else(|| {
                        Failure::usage(format!(
                            "config \"effects.{key}\" is {v}, expected true or false"
                        ))
                    })
                };
                match key.as_str() {
                    "enabled" => {
                        if !want_bool(value)? && !flag && cli_env.is_empty() {
                            return Ok(None);
                        }
                    }
                    "proxy" => spec.proxy = want_bool(value)?,
                    "log" => spec.log = want_bool(value)?,
                    "processWatch" => spec.watch = want_bool(value)?,
                    "syscalls" => spec.syscalls = want_bool(value)?,
                    "policy" => {
                        spec.policy = value
                            .as_str()
                            .and_then(crate::runtime::effects::syscalls::Policy::parse)
                            .ok_or_else(|| {
                                Failure::usage(format!(
                                    "config \"effects.policy\" is {value}, expected \"observe\" or \"contain\""
                                ))
                            })?
                    }
                    "env" => match value {
                        Value::Array(items) => {
                            for item in items {
                                let name = item.as_str().ok_or_else(|| {
                                    Failure::usage(format!(
                                        "config \"effects.env\" holds {item}, expected variable names"
                                    ))
                                })?;
                                spec.env.push((name.to_string(), None));
                            }
                        }
                        Value::Object(map) => {
                            for (name, template) in map {
                                let template = template.as_str().ok_or_else(|| {
                                    Failure::usage(format!(
                                        "config \"effects.env.{name}\" is {template}, expected a URL template such as \"http://{{canary}}/v1\""
                                    ))
                                })?;
                                spec.env.push((name.clone(), Some(template.to_string())));
                            }
                        }
                        other => {
                            return Err(Failure::usage(format!(
                                "config \"effects.env\" is {other}, expected a list of names or an object of name to URL template"
                            )));
                        }
                    },
                    other => {
                        return Err(Failure::usage(format!(
                            "config \"effects\" has an unknown key {other:?}: use enabled, proxy, log, processWatch, syscalls, policy or env"
                        )));
                    }
                }
            }
            spec
        }
        Some(other) => {
            return Err(Failure::usage(format!(
                "config \"effects\" is {other}, expected true, false or an object"
            )));
        }
    };
    for entry in cli_env {
        let (name, template) = match entry.split_once('=') {
            Some((n, t)) => (n, Some(t.to_string())),
            None => (entry.as_str(), None),
        };
        if name.is_empty() || name.contains('\0') {
            return Err(Failure::usage(format!(
                "--effects-env {entry:?} is not NAME or NAME=TEMPLATE: write it as --effects-env API_URL or --effects-env 'API_URL=http://{{canary}}/v1'"
            )));
        }
        spec.env.retain(|(n, _)| n != name);
        spec.env.push((name.to_string(), template));
    }
    for (name, template) in &spec.env {
        if let Some(t) = template
            && !t.contains("{canary}")
        {
            return Err(Failure::usage(format!(
                "the effects template for {name} is {t:?}, which does not contain {{canary}}: it would not point the server at the canary"
            )));
        }
    }
    Ok(Some(spec))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn config_effects_are_true_false_or_an_object() {
        assert_eq!(effects_spec(false, &[], None).unwrap(), None);
        assert_eq!(effects_spec(false, &[], Some(&json!(false))).unwrap(), None);
        assert_eq!(
            effects_spec(false, &[], Some(&json!(true))).unwrap(),
            Some(EffectsSpec::default())
        );
        // The flag wins over a config that says false.
        assert!(
            effects_spec(true, &[], Some(&json!(false)))
                .unwrap()
                .is_some()
        );
        let spec = effects_spec(
            false,
            &[],
            Some(&json!({"processWatch": false, "env": {"API_URL": "https://{canary}/v1"}})),
        )
        .unwrap()
        .unwrap();
        assert!(!spec.watch && spec.proxy && spec.log);
        assert_eq!(
            spec.env,
            [(
                "API_URL".to_string(),
                Some("https://{canary}/v1".to_string())
            )]
        );
        let spec = effects_spec(false, &["B".into()], Some(&json!({"env": ["A"]})))
            .unwrap()
            .unwrap();
        assert_eq!(spec.env.len(), 2);
        assert_eq!(
            effects_spec(false, &[], Some(&json!({"enabled": false}))).unwrap(),
            None
        );
        for bad in [
            json!({"proxi": true}),
            json!({"env": "API_URL"}),
            json!({"env": {"API_URL": "http://example.com"}}),
            json!({"log": "yes"}),
            json!(3),
        ] {
            assert!(effects_spec(false, &[], Some(&bad)).is_err(), "{bad}");
        }
        let spec = effects_spec(
            false,
            &[],
            Some(&json!({"policy": "observe", "syscalls": false})),
        )
        .unwrap()
        .unwrap();
        assert_eq!(
            (spec.policy, spec.syscalls),
            (crate::runtime::effects::syscalls::Policy::Observe, false)
        );
        assert!(effects_spec(false, &[], Some(&json!({"policy": "allow"}))).is_err());
    }
}
