//! A bounded collection of issues: a flood of identical problems (a million non-JSON lines) keeps
//! the first few occurrences of each code in full and counts the rest on the first one.

use crate::catalog::Rule;
use crate::issue::{Issue, Phase};

#[derive(Debug)]
pub struct IssueSink {
    issues: Vec<Issue>,
    per_code_cap: usize,
}

impl IssueSink {
    pub fn new(per_code_cap: usize) -> IssueSink {
        IssueSink {
            issues: Vec::new(),
            per_code_cap: per_code_cap.max(1),
        }
    }

    /// Records an issue (tagged with `phase` when it has none).
    pub fn push(&mut self, mut issue: Issue, phase: Phase) {
        if issue.phase.is_none() {
            issue.phase = Some(phase);
        }
        let rule = issue.rule;
        if !self.would_keep(rule) {
            self.count_more(rule);
            return;
        }
        self.issues.push(issue);
    }

    /// Keeps only the issues `keep` accepts (a verdict revised by later evidence).
    pub fn retain(&mut self, keep: impl FnMut(&Issue) -> bool) {
        self.issues.retain(keep);
    }

    /// Whether another issue with this code would be kept in full (not just counted).
    pub fn would_keep(&self, rule: &'static Rule) -> bool {
        self.issues.iter().filter(|i| i.is(rule)).count() < self.per_code_cap
    }

    /// Counts one more occurrence of a code already at its cap, without building the issue.
    pub fn count_more(&mut self, rule: &'static Rule) {
        if let Some(first) = self.issues.iter_mut().find(|i| i.is(rule)) {
            let more = first
                .fields
                .get("moreOccurrences")
                .and_then(|v| v.as_u64())
                .unwrap_or(0)
                + 1;
            first.fields.insert("moreOccurrences".into(), more.into());
        }
    }

    pub fn has(&self, rule: &'static Rule) -> bool {
        self.issues.iter().any(|i| i.is(rule))
    }

    pub fn iter(&self) -> impl Iterator<Item = &Issue> {
        self.issues.iter()
    }

    /// How many issues are kept: a mark for [`IssueSink::since`].
    pub fn len(&self) -> usize {
        self.issues.len()
    }

    pub fn is_empty(&self) -> bool {
        self.issues.is_empty()
    }

    /// The issues kept after `mark` (a probe's share of a session it shares with other probes).
    pub fn since(&self, mark: usize) -> impl Iterator<Item = &Issue> {
        self.issues.iter().skip(mark)
    }

    pub fn into_vec(self) -> Vec<Issue> {
        self.issues
    }
}
