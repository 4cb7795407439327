//! Drift between repeated runs (`--repeat`): every initialized run is compared with the first
//! initialized one — negotiated protocol and era, capability keys, tool names and count, and the
//! resource, template and prompt counts. Drift is a warning: a stability advisory.

use super::lists::ListKind;
use crate::catalog::protocol as rules;
use crate::issue::Issue;
use crate::runtime::record::RunRecord;

/// The reference's `drift` object.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Drift {
    pub baseline_run: Option<u32>,
    pub compared_runs: Vec<u32>,
    pub protocol_changed: Vec<u32>,
    pub capabilities_changed: Vec<u32>,
    pub tools_changed: Vec<u32>,
    pub resources_changed: Vec<u32>,
    pub templates_changed: Vec<u32>,
    pub prompts_changed: Vec<u32>,
    pub passed_runs: Vec<u32>,
    pub failed_runs: Vec<u32>,
    pub codes: Vec<&'static str>,
}

fn count(run: &RunRecord, kind: ListKind) -> Option<usize> {
    run.capability(kind).and_then(|c| c.item_count)
}

fn tools(run: &RunRecord) -> Option<Vec<String>> {
    run.capability(ListKind::Tools)
        .filter(|c| c.item_count.is_some())
        .map(|c| {
            let mut names = c.item_ids.clone();
            names.sort();
            names
        })
}

/// Compares the runs; returns the drift summary and its warnings (tagged with the run).
pub fn compare(runs: &[RunRecord]) -> (Drift, Vec<Issue>) {
    let mut d = Drift::default();
    let mut issues = Vec::new();
    for r in runs {
        if r.has_errors() {
            d.failed_runs.push(r.run);
        } else {
            d.passed_runs.push(r.run);
        }
    }
    let initialized: Vec<&RunRecord> = runs.iter().filter(|r| r.initialized).collect();
    if let Some((base, rest)) = initialized.split_first() {
        d.baseline_run = Some(base.run);
        for r in rest {
            d.compared_runs.push(r.run);
            let mut push = |issue: Issue| {
                let mut issue = issue;
                issue.run = Some(r.run);
                issues.push(issue);
            };
            let proto = |x: &RunRecord| {
                format!(
                    "{} ({})",
                    x.negotiated_protocol.as_deref().unwrap_or("none"),
                    x.era.as_str()
                )
            };
            if base.negotiated_protocol != r.negotiated_protocol || base.era != r.era {
                d.protocol_changed.push(r.run);
                push(Issue::new(
                    &rules::REPEAT_PROTOCOL_DRIFT,
                    format!(
                        "run {} negotiated {}, run {} negotiated {}",
                        base.run,
                        proto(base),
                        r.run,
                        proto(r)
                    ),
                ));
            }
            if base.capability_keys != r.capability_keys {
                d.capabilities_changed.push(r.run);
                push(Issue::new(
                    &rules::REPEAT_CAPABILITY_DRIFT,
                    format!(
                        "run {} advertised capabilities {:?}, run {} advertised {:?}",
                        base.run, base.capability_keys, r.run, r.capability_keys
                    ),
                ));
            }
            if let (Some(a), Some(b)) = (tools(base), tools(r))
                && a != b
            {
                d.tools_changed.push(r.run);
                let added: Vec<&String> = b.iter().filter(|n| !a.contains(n)).collect();
                let removed: Vec<&String> = a.iter().filter(|n| !b.contains(n)).collect();
                push(Issue::new(
                    &rules::REPEAT_TOOL_DRIFT,
                    format!(
                        "run {} listed {} tool(s), run {} listed {} (added {:?}, removed {:?})",
                        base.run,
                        a.len(),
                        r.run,
                        b.len(),
                        added,
                        removed
                    ),
                ));
            }
            for (kind, changed) in [
                (ListKind::Resources, &mut d.resources_changed),
                (ListKind::ResourceTemplates, &mut d.templates_changed),
                (ListKind::Prompts, &mut d.prompts_changed),
            ] {
                if let (Some(a), Some(b)) = (count(base, kind), count(r, kind))
                    && a != b
                {
                    changed.push(r.run);
                    push(
                        Issue::new(
                            &rules::REPEAT_LIST_SHAPE_DRIFT,
                            format!(
                                "{}: run {} listed {a} item(s), run {} listed {b}",
                                kind.method(),
                                base.run,
                                r.run
                            ),
                        )
                        .field("method", kind.method()),
                    );
                }
            }
        }
    }
    if !d.failed_runs.is_empty() && !d.passed_runs.is_empty() {
        issues.push(Issue::new(
            &rules::REPEAT_OUTCOME_DRIFT,
            format!(
                "run(s) {:?} passed and run(s) {:?} failed: the server is flaky",
                d.passed_runs, d.failed_runs
            ),
        ));
    }
    for i in &issues {
        if !d.codes.contains(&i.code()) {
            d.codes.push(i.code());
        }
    }
    (d, issues)
}
