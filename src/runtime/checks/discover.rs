//! The reply to `server/discover`: does it prove a stateless-era (2026-07-28) server, and is its
//! `DiscoverResult` well formed?

use super::initialize::short;
use crate::catalog::Severity;
use crate::catalog::protocol as rules;
use crate::issue::Issue;
use crate::protocol;
use serde_json::Value;

/// What a successful `server/discover` reply means.
#[derive(Debug)]
pub enum Verdict {
    /// The server speaks a stateless revision.
    Stateless {
        versions: Vec<String>,
        capabilities: Value,
        issues: Vec<Issue>,
        /// False when an error-level issue means the session cannot go on.
        usable: bool,
    },
    /// Not a discover result: the server is treated as legacy-era.
    Legacy { issues: Vec<Issue> },
}

pub const SERVER_INFO_KEY: &str = "io.modelcontextprotocol/serverInfo";

pub fn check(result: &Value) -> Verdict {
    let versions: Vec<&Value> = result
        .get("supportedVersions")
        .and_then(Value::as_array)
        .map(|a| a.iter().collect())
        .unwrap_or_default();
    let stateless = versions
        .iter()
        .filter_map(|v| v.as_str())
        .any(|v| v >= protocol::MODERN_REVISION);
    if !stateless {
        return Verdict::Legacy {
            issues: vec![Issue::new(
                &rules::DISCOVER_UNEXPECTED_RESULT,
                format!(
                    "server/discover was answered with result {} instead of error -32601; treated as a legacy-era server",
                    short(result)
                ),
            )],
        };
    }
    let mut issues = Vec::new();
    let strings: Vec<String> = versions
        .iter()
        .filter_map(|v| v.as_str().map(str::to_string))
        .collect();
    if strings.len() != versions.len() {
        issues.push(
            Issue::new(
                &rules::DISCOVER_INVALID_RESULT,
                format!(
                    "server/discover supportedVersions {} holds a non-string entry",
                    short(&result["supportedVersions"])
                ),
            )
            .detail("supported-versions-invalid"),
        );
    }
    let capabilities = match result.get("capabilities") {
        Some(c @ Value::Object(_)) => c.clone(),
        other => {
            issues.push(
                Issue::new(
                    &rules::DISCOVER_INVALID_RESULT,
                    format!(
                        "the server/discover result has capabilities {}, expected an object",
                        other.map(short).unwrap_or_else(|| "missing".into())
                    ),
                )
                .detail("capabilities-invalid"),
            );
            Value::Object(Default::default())
        }
    };
    let info = result.get("_meta").and_then(|m| m.get(SERVER_INFO_KEY));
    let info_ok = info.is_some_and(|i| {
        i.get("name").is_some_and(Value::is_string)
            && i.get("version").is_some_and(Value::is_string)
    });
    if !info_ok {
        issues.push(
            Issue::new(
                &rules::DISCOVER_INVALID_RESULT,
                format!(
                    "the server/discover result has _meta[{SERVER_INFO_KEY:?}] {}, expected {{name, version}} strings",
                    info.map(short).unwrap_or_else(|| "missing".into())
                ),
            )
            .severity(Severity::Warning)
            .detail("server-info-invalid"),
        );
    }
    if let Some(issue) = cache_fields(result, "server/discover") {
        issues.push(issue);
    }
    if !result.get("resultType").is_some_and(Value::is_string) {
        issues.push(
            Issue::new(
                &rules::RESULT_TYPE_MISSING,
                "the server/discover result has no string resultType".to_string(),
            )
            .field("method", "server/discover"),
        );
    }
    // Only a broken `supportedVersions` or `capabilities` leaves nothing to go on.
    let usable = !issues
        .iter()
        .any(|i| i.is_error() && i.is(&rules::DISCOVER_INVALID_RESULT));
    Verdict::Stateless {
        versions: strings,
        capabilities,
        issues,
        usable,
    }
}

/// Stateless era: the methods whose results are cacheable (`ttlMs` and `cacheScope` required).
pub fn is_cacheable(method: &str) -> bool {
    matches!(
        method,
        "server/discover"
            | "tools/list"
            | "resources/list"
            | "resources/templates/list"
            | "prompts/list"
            | "resources/read"
    )
}

/// The issue for a cacheable result that lacks `ttlMs` or a valid `cacheScope`.
pub fn cache_fields(result: &Value, method: &str) -> Option<Issue> {
    let mut missing = Vec::new();
    if result.get("ttlMs").is_none_or(|t| t.as_u64().is_none()) {
        missing.push(format!(
            "ttlMs {}",
            result
                .get("ttlMs")
                .map(short)
                .unwrap_or_else(|| "missing".into())
        ));
    }
    if !matches!(
        result.get("cacheScope").and_then(Value::as_str),
        Some("public" | "private")
    ) {
        missing.push(format!(
            "cacheScope {}",
            result
                .get("cacheScope")
                .map(short)
                .unwrap_or_else(|| "missing".into())
        ));
    }
    (!missing.is_empty()).then(|| {
        Issue::new(
            &rules::RESULT_CACHE_FIELDS_MISSING,
            format!(
                "the {method} result has {}; the stateless era requires an integer ttlMs and cacheScope \"public\" or \"private\"",
                missing.join(" and ")
            ),
        )
        .field("method", method)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_stateless_server_is_recognized_by_its_versions() {
        let good = json!({"resultType": "complete", "ttlMs": 0, "cacheScope": "private", "supportedVersions": ["2026-07-28", "2025-11-25"],
            "capabilities": {"tools": {}}, "_meta": {SERVER_INFO_KEY: {"name": "x", "version": "1"}}});
        match check(&good) {
            Verdict::Stateless {
                issues,
                usable,
                versions,
                ..
            } => {
                assert!(issues.is_empty() && usable);
                assert_eq!(versions, ["2026-07-28", "2025-11-25"]);
            }
            other => panic!("{other:?}"),
        }
        match check(&json!({})) {
            Verdict::Legacy { issues } => {
                assert_eq!(issues[0].code(), "discover-unexpected-result")
            }
            other => panic!("{other:?}"),
        }
        match check(&json!({"supportedVersions": ["2026-07-28"]})) {
            Verdict::Stateless { issues, usable, .. } => {
                let codes: Vec<_> = issues.iter().map(|i| i.code()).collect();
                assert_eq!(
                    codes,
                    [
                        "discover-invalid-result",
                        "discover-invalid-result",
                        "result-cache-fields-missing",
                        "result-type-missing"
                    ]
                );
                assert!(!usable);
            }
            other => panic!("{other:?}"),
        }
    }
}
