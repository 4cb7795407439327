//! Capability probes: for each list method of an advertised capability, follow `nextCursor` to
//! the end (bounded by a page cap), then judge the items. Unadvertised capabilities are skipped.

use super::{exit_detail, stdout_closed_issue};
use crate::catalog::{Severity, protocol as rules};
use crate::issue::{Issue, Phase};
use crate::runtime::checks::lists::{self, ListKind, Pager};
use crate::runtime::checks::tools::{self, NameRule, ToolSummary};
use crate::runtime::record::{CapabilityCheck, CapabilityStatus};
use crate::runtime::session::{Outcome, Reply, Session};
use serde_json::{Value, json};

#[derive(Debug, Clone)]
pub struct ListsConfig {
    pub max_pages: usize,
    pub name_rule: NameRule,
}

#[derive(Debug, Default)]
pub struct Lists {
    pub checks: Vec<CapabilityCheck>,
    pub tool_schema: Option<ToolSummary>,
    /// Every tool definition listed (for validating call results).
    pub tools: Option<Vec<Value>>,
}

/// Whether the capability is advertised (present as an object).
pub fn advertised(capabilities: &Value, kind: ListKind) -> bool {
    capabilities
        .get(kind.capability())
        .is_some_and(Value::is_object)
}

/// Records the checks without probing (profile `smoke`, or a session that never got ready).
pub fn unprobed(capabilities: &Value) -> Lists {
    Lists {
        checks: ListKind::ALL
            .into_iter()
            .map(|k| CapabilityCheck::new(k, advertised(capabilities, k)))
            .collect(),
        ..Lists::default()
    }
}

pub async fn run(s: &mut Session, capabilities: &Value, cfg: &ListsConfig) -> Lists {
    let mut out = Lists::default();
    let revision = s
        .negotiated
        .clone()
        .unwrap_or_else(|| s.cfg.protocol.clone());
    for kind in ListKind::ALL {
        let mut check = CapabilityCheck::new(kind, advertised(capabilities, kind));
        if !check.advertised || s.is_dead() || !s.initialized {
            out.checks.push(check);
            continue;
        }
        s.phase = Phase::Capabilities;
        let pager = paginate(s, kind, cfg.max_pages, &mut check).await;
        if check.pages > 0 {
            check.item_count = Some(pager.items.len());
            check.item_ids = lists::ids(kind, &pager.items);
            let issues = match kind {
                ListKind::Tools => {
                    let (issues, summary) = tools::check(&pager.items, &revision, cfg.name_rule);
                    out.tool_schema = Some(summary);
                    out.tools = Some(pager.items.clone());
                    issues
                }
                ListKind::Resources => lists::resources(&pager.items),
                ListKind::ResourceTemplates => lists::templates(&pager.items),
                ListKind::Prompts => lists::prompts(&pager.items),
            };
            for i in issues {
                s.record(i.field("method", kind.method()));
            }
        }
        out.checks.push(check);
    }
    if s.phase == Phase::Capabilities {
        s.phase = Phase::PostInitialize;
    }
    out
}

async fn paginate(
    s: &mut Session,
    kind: ListKind,
    max_pages: usize,
    check: &mut CapabilityCheck,
) -> Pager {
    let method = kind.method();
    let mut pager = Pager::new(kind);
    let mut cursor: Option<String> = None;
    let timeout_ms = s.cfg.timeout.as_millis() as u64;
    loop {
        if pager.pages >= max_pages {
            if let Some(c) = &cursor {
                s.record(
                    Issue::new(
                        &rules::PAGINATION_PAGE_CAP,
                        format!("{method} still returned nextCursor {c:?} after {max_pages} pages; the guard stopped following it"),
                    )
                    .field("method", method),
                );
            }
            break;
        }
        let page_no = pager.pages + 1;
        let params = cursor.as_ref().map(|c| json!({"cursor": c}));
        let outcome = s.request(method, params).await;
        let on_page = if page_no > 1 {
            format!(" (page {page_no})")
        } else {
            String::new()
        };
        match outcome {
            Outcome::Reply(Reply::Result { value, .. }) => {
                super::check_result_type(s, method, &value);
                let mut issues = Vec::new();
                let page = lists::page(kind, &value, page_no, &mut issues);
                let next = page.map(|p| pager.add(p, &mut issues));
                for i in issues {
                    s.record(i);
                }
                match next {
                    None => {
                        check.status = CapabilityStatus::Invalid;
                        break;
                    }
                    Some(None) => {
                        check.status = CapabilityStatus::Responded;
                        break;
                    }
                    Some(Some(next)) => {
                        check.status = CapabilityStatus::Responded;
                        cursor = Some(next);
                    }
                }
            }
            Outcome::Reply(Reply::Error { error, .. }) => {
                check.error = Some((error.code, error.message.clone()));
                if error.code == -32601 && page_no == 1 {
                    check.status = CapabilityStatus::Unsupported;
                    // Servers often implement resources/list only (the SDKs' low-level servers
                    // do), and clients treat -32601 there as "no templates": a note.
                    let severity = if kind == ListKind::ResourceTemplates {
                        Severity::Note
                    } else {
                        Severity::Error
                    };
                    s.record(
                        Issue::new(
                            &rules::CAPABILITY_LIST_UNSUPPORTED,
                            format!(
                                "the server advertises the {:?} capability but answered {method} with -32601: {:?}",
                                kind.capability(),
                                error.message
                            ),
                        )
                        .severity(severity)
                        .field("method", method),
                    );
                } else {
                    check.status = CapabilityStatus::Error;
                    s.record(
                        Issue::new(
                            &rules::CAPABILITY_LIST_ERROR,
                            format!(
                                "{method}{on_page} was answered with error {}: {:?}",
                                error.code, error.message
                            ),
                        )
                        .field("method", method),
                    );
                }
                break;
            }
            Outcome::Reply(Reply::Broken { .. }) | Outcome::Misaddressed => {
                check.status = CapabilityStatus::Invalid;
                break;
            }
            Outcome::Timeout => {
                check.status = CapabilityStatus::Timeout;
                s.record(
                    Issue::new(
                        &rules::CAPABILITY_LIST_TIMEOUT,
                        format!(
                            "the server did not answer {method}{on_page} within {timeout_ms} ms"
                        ),
                    )
                    .field("method", method)
                    .field("timeoutMs", timeout_ms),
                );
                break;
            }
            Outcome::Exited(exit) => {
                check.status = CapabilityStatus::MissingResponse;
                s.record(super::with_exit(
                    Issue::new(
                        &rules::CAPABILITY_LIST_MISSING_RESPONSE,
                        format!(
                            "the server exited with {} while {method}{on_page} was waiting for its response",
                            exit.describe()
                        ),
                    )
                    .field("method", method)
                    .field("exit", exit_detail(&exit, "during-operation")),
                    &exit,
                ));
                break;
            }
            Outcome::StdoutClosed => {
                check.status = CapabilityStatus::MissingResponse;
                s.record(stdout_closed_issue(method));
                break;
            }
            Outcome::OutputLimit => {
                check.status = CapabilityStatus::MissingResponse;
                break;
            }
        }
    }
    check.pages = pager.pages;
    pager
}
