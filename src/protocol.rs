//! Facts about MCP revisions that more than one module needs.

/// The legacy-era revisions (initialize handshake), oldest first.
pub const LEGACY_REVISIONS: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

/// The stateless revision (no initialize; `server/discover`).
pub const MODERN_REVISION: &str = "2026-07-28";

/// The revision the guard asks for by default.
pub const DEFAULT_REVISION: &str = "2025-11-25";

/// Every published revision, oldest first.
pub fn all_revisions() -> impl Iterator<Item = &'static str> {
    LEGACY_REVISIONS
        .iter()
        .copied()
        .chain(std::iter::once(MODERN_REVISION))
}

pub fn is_known(revision: &str) -> bool {
    all_revisions().any(|r| r == revision)
}

/// Revisions are dates: they order as strings.
pub fn is_newer(a: &str, b: &str) -> bool {
    a > b
}

/// From 2025-06-18 a server MUST NOT send requests for client capabilities the client did not
/// declare.
pub fn forbids_undeclared_client_requests(negotiated: &str) -> bool {
    negotiated >= "2025-06-18"
}

/// Server → client requests and the client capability each needs.
pub const CLIENT_CAPABILITY_REQUESTS: [(&str, &str); 3] = [
    ("roots/list", "roots"),
    ("sampling/createMessage", "sampling"),
    ("elicitation/create", "elicitation"),
];

/// Client → server methods and the server capability that offers them. A server that does not
/// advertise the capability answers them -32601 Method not found, as the specification asks.
pub const SERVER_CAPABILITY_METHODS: [(&str, &str); 5] = [
    ("tools/", "tools"),
    ("resources/", "resources"),
    ("prompts/", "prompts"),
    ("logging/", "logging"),
    ("completion/", "completions"),
];

/// The server capability a client method belongs to (`tools/list` → `tools`), if any.
pub fn capability_of(method: &str) -> Option<&'static str> {
    SERVER_CAPABILITY_METHODS
        .iter()
        .find(|(prefix, _)| method.starts_with(prefix))
        .map(|(_, capability)| *capability)
}
