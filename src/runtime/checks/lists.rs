//! The four list methods of advertised capabilities: one page's shape, pagination across pages
//! (repeated cursors, duplicates, `""`), and the items of the lists the spec is firm about
//! (prompts, resources, resource templates; tools live in `tools.rs`).

use super::initialize::short;
use crate::catalog::protocol as rules;
use crate::issue::Issue;
use serde_json::Value;
use std::collections::{HashMap, HashSet};

/// A list method of an advertised capability.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ListKind {
    Tools,
    Resources,
    ResourceTemplates,
    Prompts,
}

impl ListKind {
    pub const ALL: [ListKind; 4] = [
        ListKind::Tools,
        ListKind::Resources,
        ListKind::ResourceTemplates,
        ListKind::Prompts,
    ];

    pub fn method(self) -> &'static str {
        match self {
            ListKind::Tools => "tools/list",
            ListKind::Resources => "resources/list",
            ListKind::ResourceTemplates => "resources/templates/list",
            ListKind::Prompts => "prompts/list",
        }
    }

    /// The result field holding the items (also the key in the JSON report).
    pub fn items_key(self) -> &'static str {
        match self {
            ListKind::Tools => "tools",
            ListKind::Resources => "resources",
            ListKind::ResourceTemplates => "resourceTemplates",
            ListKind::Prompts => "prompts",
        }
    }

    /// The server capability that advertises this list.
    pub fn capability(self) -> &'static str {
        match self {
            ListKind::Tools => "tools",
            ListKind::Resources | ListKind::ResourceTemplates => "resources",
            ListKind::Prompts => "prompts",
        }
    }

    /// The field that identifies an item.
    pub fn id_key(self) -> &'static str {
        match self {
            ListKind::Tools | ListKind::Prompts => "name",
            ListKind::Resources => "uri",
            ListKind::ResourceTemplates => "uriTemplate",
        }
    }

    fn invalid_result(self) -> &'static crate::catalog::Rule {
        match self {
            ListKind::Tools => &rules::TOOLS_LIST_INVALID_RESULT,
            _ => &rules::CAPABILITY_LIST_INVALID_RESULT,
        }
    }
}

/// One page of a list.
#[derive(Debug, Clone, Default)]
pub struct Page {
    pub items: Vec<Value>,
    pub next_cursor: Option<String>,
}

/// Reads one page of `kind` from a result. `None` when the result is unusable (issue recorded).
pub fn page(
    kind: ListKind,
    result: &Value,
    page_no: usize,
    issues: &mut Vec<Issue>,
) -> Option<Page> {
    let method = kind.method();
    let key = kind.items_key();
    let where_ = if page_no > 1 {
        format!("{method} page {page_no}")
    } else {
        method.to_string()
    };
    let rule = kind.invalid_result();
    let Some(obj) = result.as_object() else {
        issues.push(
            Issue::new(
                rule,
                format!(
                    "the {where_} result is {}, expected an object",
                    short(result)
                ),
            )
            .detail("not-an-object")
            .field("method", method),
        );
        return None;
    };
    let items = match obj.get(key) {
        Some(Value::Array(items)) => items.clone(),
        other => {
            let detail = if kind == ListKind::Tools {
                "tools-not-an-array"
            } else {
                "items-not-an-array"
            };
            let got = other.map(short).unwrap_or_else(|| "missing".into());
            issues.push(
                Issue::new(
                    rule,
                    format!("the {where_} result has {key:?} {got}, expected an array"),
                )
                .detail(detail)
                .field("method", method),
            );
            return None;
        }
    };
    let next_cursor = match obj.get("nextCursor") {
        None => None,
        Some(Value::String(c)) if c.is_empty() => {
            issues.push(
                Issue::new(
                    &rules::PAGINATION_EMPTY_CURSOR,
                    format!("the {where_} result has nextCursor \"\"; the guard treats it as the last page, but some clients send it back and start over"),
                )
                .field("method", method),
            );
            None
        }
        Some(Value::String(c)) => Some(c.clone()),
        Some(other) => {
            issues.push(
                Issue::new(
                    rule,
                    format!(
                        "the {where_} result has nextCursor {}, expected a string or no field at all",
                        short(other)
                    ),
                )
                .detail("next-cursor-invalid")
                .field("method", method),
            );
            None
        }
    };
    Some(Page { items, next_cursor })
}

/// Follows pages of one list: detects repeated cursors and items repeated on a later page, and
/// keeps every item once.
#[derive(Debug)]
pub struct Pager {
    pub kind: ListKind,
    pub pages: usize,
    /// Every item, minus the ones repeated from an earlier page.
    pub items: Vec<Value>,
    cursors: HashSet<String>,
    first_page: HashMap<String, usize>,
    duplicates: Vec<String>,
}

impl Pager {
    pub fn new(kind: ListKind) -> Pager {
        Pager {
            kind,
            pages: 0,
            items: Vec::new(),
            cursors: HashSet::new(),
            first_page: HashMap::new(),
            duplicates: Vec::new(),
        }
    }

    /// Adds a page; returns the cursor to request next, `None` at the end (or on a loop).
    pub fn add(&mut self, page: Page, issues: &mut Vec<Issue>) -> Option<String> {
        self.pages += 1;
        let this = self.pages;
        let method = self.kind.method();
        let mut repeated = Vec::new();
        for item in page.items {
            let id = item
                .get(self.kind.id_key())
                .and_then(Value::as_str)
                .map(str::to_string);
            if let Some(id) = id {
                match self.first_page.get(&id) {
                    Some(&first) if first < this => {
                        repeated.push(format!("{id:?} (page {first})"));
                        self.duplicates.push(id);
                        continue;
                    }
                    Some(_) => {}
                    None => {
                        self.first_page.insert(id, this);
                    }
                }
            }
            self.items.push(item);
        }
        if !repeated.is_empty() {
            let shown: Vec<String> = repeated.iter().take(5).cloned().collect();
            let more = if repeated.len() > 5 {
                format!(" and {} more", repeated.len() - 5)
            } else {
                String::new()
            };
            issues.push(
                Issue::new(
                    &rules::PAGINATION_DUPLICATE_ITEMS,
                    format!(
                        "{method} page {this} repeats {} item(s) already listed on an earlier page: {}{more}",
                        repeated.len(),
                        shown.join(", ")
                    ),
                )
                .field("method", method),
            );
        }
        let cursor = page.next_cursor?;
        if !self.cursors.insert(cursor.clone()) {
            issues.push(
                Issue::new(
                    &rules::PAGINATION_CURSOR_REPEATED,
                    format!(
                        "{method} page {this} returned nextCursor {cursor:?}, which was already followed; a client following it would loop forever"
                    ),
                )
                .field("method", method),
            );
            return None;
        }
        Some(cursor)
    }

    /// Identifiers repeated across pages.
    pub fn duplicates(&self) -> &[String] {
        &self.duplicates
    }
}

/// The identifiers of a list's items, in order (items without one are skipped).
pub fn ids(kind: ListKind, items: &[Value]) -> Vec<String> {
    items
        .iter()
        .filter_map(|i| i.get(kind.id_key()).and_then(Value::as_str))
        .map(str::to_string)
        .collect()
}

/// Checks prompts: a string name, arguments as an array of `{name, required?: bool}`.
pub fn prompts(items: &[Value]) -> Vec<Issue> {
    let mut issues = Vec::new();
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for (n, item) in items.iter().enumerate() {
        let label = label("prompt", n, item, "name");
        let Some(obj) = item.as_object() else {
            issues.push(
                Issue::new(
                    &rules::PROMPT_INVALID,
                    format!("{label} is {}, expected an object", short(item)),
                )
                .detail("not-an-object"),
            );
            continue;
        };
        match obj.get("name") {
            Some(Value::String(name)) if !name.is_empty() => {
                *seen.entry(name.as_str()).or_default() += 1;
            }
            other => issues.push(
                Issue::new(
                    &rules::PROMPT_INVALID,
                    format!(
                        "{label} has name {}, expected a non-empty string",
                        other.map(short).unwrap_or_else(|| "missing".into())
                    ),
                )
                .detail("name-missing"),
            ),
        }
        match obj.get("arguments") {
            None => {}
            Some(Value::Array(args)) => {
                for (i, arg) in args.iter().enumerate() {
                    let bad = match arg {
                        Value::Object(a) => match (a.get("name"), a.get("required")) {
                            (Some(Value::String(_)), None | Some(Value::Bool(_))) => None,
                            (Some(Value::String(_)), Some(other)) => {
                                Some(format!("has required {}, expected a boolean", short(other)))
                            }
                            (other, _) => Some(format!(
                                "has name {}, expected a string",
                                other.map(short).unwrap_or_else(|| "missing".into())
                            )),
                        },
                        other => Some(format!("is {}, expected an object", short(other))),
                    };
                    if let Some(why) = bad {
                        issues.push(
                            Issue::new(
                                &rules::PROMPT_INVALID,
                                format!("{label} argument #{} {why}", i + 1),
                            )
                            .detail("argument-invalid"),
                        );
                    }
                }
            }
            Some(other) => issues.push(
                Issue::new(
                    &rules::PROMPT_INVALID,
                    format!("{label} has arguments {}, expected an array", short(other)),
                )
                .detail("arguments-not-an-array"),
            ),
        }
    }
    let mut dups: Vec<(&str, usize)> = seen.into_iter().filter(|(_, c)| *c > 1).collect();
    dups.sort();
    for (name, count) in dups {
        issues.push(Issue::new(
            &rules::PROMPT_NAME_DUPLICATE,
            format!("prompt name {name:?} appears {count} times in prompts/list"),
        ));
    }
    issues
}

/// Checks resources: an absolute `uri` and a `name`.
pub fn resources(items: &[Value]) -> Vec<Issue> {
    let mut issues = Vec::new();
    for (n, item) in items.iter().enumerate() {
        let label = label("resource", n, item, "uri");
        let Some(obj) = item.as_object() else {
            issues.push(
                Issue::new(
                    &rules::RESOURCE_INVALID,
                    format!("{label} is {}, expected an object", short(item)),
                )
                .detail("not-an-object"),
            );
            continue;
        };
        match obj.get("uri") {
            Some(Value::String(uri)) if has_scheme(uri) => {}
            Some(Value::String(uri)) => issues.push(
                Issue::new(
                    &rules::RESOURCE_INVALID,
                    format!("{label} has uri {uri:?}, which is not an absolute URI (no `scheme:`)"),
                )
                .detail("uri-invalid"),
            ),
            other => issues.push(
                Issue::new(
                    &rules::RESOURCE_INVALID,
                    format!(
                        "{label} has uri {}, expected a string",
                        other.map(short).unwrap_or_else(|| "missing".into())
                    ),
                )
                .detail("uri-missing"),
            ),
        }
        if !matches!(obj.get("name"), Some(Value::String(_))) {
            issues.push(
                Issue::new(
                    &rules::RESOURCE_INVALID,
                    format!(
                        "{label} has name {}, expected a string",
                        obj.get("name")
                            .map(short)
                            .unwrap_or_else(|| "missing".into())
                    ),
                )
                .detail("name-missing"),
            );
        }
    }
    issues
}

/// Checks resource templates: a `uriTemplate` and a `name`.
pub fn templates(items: &[Value]) -> Vec<Issue> {
    let mut issues = Vec::new();
    for (n, item) in items.iter().enumerate() {
        let label = label("resource template", n, item, "uriTemplate");
        let Some(obj) = item.as_object() else {
            issues.push(
                Issue::new(
                    &rules::RESOURCE_TEMPLATE_INVALID,
                    format!("{label} is {}, expected an object", short(item)),
                )
                .detail("not-an-object"),
            );
            continue;
        };
        for (field, detail) in [
            ("uriTemplate", "uri-template-missing"),
            ("name", "name-missing"),
        ] {
            if !matches!(obj.get(field), Some(Value::String(_))) {
                issues.push(
                    Issue::new(
                        &rules::RESOURCE_TEMPLATE_INVALID,
                        format!(
                            "{label} has {field} {}, expected a string",
                            obj.get(field)
                                .map(short)
                                .unwrap_or_else(|| "missing".into())
                        ),
                    )
                    .detail(detail),
                );
            }
        }
    }
    issues
}

/// `prompt "summarize"` or `prompt #3` when it has no usable identifier.
fn label(what: &str, n: usize, item: &Value, key: &str) -> String {
    match item.get(key).and_then(Value::as_str) {
        Some(id) => format!("{what} {id:?}"),
        None => format!("{what} #{}", n + 1),
    }
}

/// RFC 3986: `scheme ":" ...`, scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ).
fn has_scheme(uri: &str) -> bool {
    let Some((scheme, _)) = uri.split_once(':') else {
        return false;
    };
    let mut chars = scheme.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn codes(issues: &[Issue]) -> Vec<(&'static str, Option<&'static str>)> {
        issues.iter().map(|i| (i.code(), i.detail_code)).collect()
    }

    #[test]
    fn pages_are_read_and_bad_shapes_named() {
        let mut issues = Vec::new();
        let p = page(
            ListKind::Tools,
            &json!({"tools": [], "nextCursor": "c2"}),
            1,
            &mut issues,
        )
        .unwrap();
        assert_eq!(p.next_cursor.as_deref(), Some("c2"));
        assert!(issues.is_empty());
        assert!(
            page(
                ListKind::Resources,
                &json!({"resources": {}}),
                1,
                &mut issues
            )
            .is_none()
        );
        let p = page(
            ListKind::Prompts,
            &json!({"prompts": [], "nextCursor": null}),
            1,
            &mut issues,
        )
        .unwrap();
        assert!(p.next_cursor.is_none());
        let p = page(
            ListKind::Prompts,
            &json!({"prompts": [], "nextCursor": ""}),
            2,
            &mut issues,
        )
        .unwrap();
        assert!(p.next_cursor.is_none());
        assert_eq!(
            codes(&issues),
            [
                ("capability-list-invalid-result", Some("items-not-an-array")),
                (
                    "capability-list-invalid-result",
                    Some("next-cursor-invalid")
                ),
                ("pagination-empty-cursor", None),
            ]
        );
    }

    #[test]
    fn the_pager_stops_on_a_repeated_cursor_and_drops_repeated_items() {
        let mut issues = Vec::new();
        let mut pager = Pager::new(ListKind::Tools);
        let next = pager.add(
            Page {
                items: vec![json!({"name": "a"}), json!({"name": "b"})],
                next_cursor: Some("p2".into()),
            },
            &mut issues,
        );
        assert_eq!(next.as_deref(), Some("p2"));
        let next = pager.add(
            Page {
                items: vec![json!({"name": "b"}), json!({"name": "c"})],
                next_cursor: Some("p2".into()),
            },
            &mut issues,
        );
        assert_eq!(next, None);
        assert_eq!(ids(ListKind::Tools, &pager.items), ["a", "b", "c"]);
        assert_eq!(
            codes(&issues),
            [
                ("pagination-duplicate-items", None),
                ("pagination-cursor-repeated", None)
            ]
        );
    }

    #[test]
    fn prompts_resources_and_templates_follow_the_schema() {
        let issues = prompts(&[
            json!({"name": "a", "arguments": [{"name": "x", "required": true}]}),
            json!({"name": "a"}),
            json!({"arguments": {}}),
            json!({"name": "b", "arguments": [{"required": "yes"}]}),
        ]);
        assert_eq!(
            codes(&issues),
            [
                ("prompt-invalid", Some("name-missing")),
                ("prompt-invalid", Some("arguments-not-an-array")),
                ("prompt-invalid", Some("argument-invalid")),
                ("prompt-name-duplicate", None),
            ]
        );
        let issues = resources(&[
            json!({"uri": "file:///a.txt", "name": "a"}),
            json!({"uri": "notes.txt", "name": "n"}),
            json!({"name": "x"}),
            json!({"uri": "note://1"}),
        ]);
        assert_eq!(
            codes(&issues),
            [
                ("resource-invalid", Some("uri-invalid")),
                ("resource-invalid", Some("uri-missing")),
                ("resource-invalid", Some("name-missing")),
            ]
        );
        let issues = templates(&[
            json!({"uriTemplate": "note://{id}", "name": "n"}),
            json!({"uri": "x"}),
        ]);
        assert_eq!(
            codes(&issues),
            [
                ("resource-template-invalid", Some("uri-template-missing")),
                ("resource-template-invalid", Some("name-missing")),
            ]
        );
    }
}
