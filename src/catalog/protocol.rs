//! Rules of protocol depth: the era probe (`server/discover`), advertised capabilities and their
//! list methods, pagination, tool/prompt/resource metadata, tool results, notifications sent
//! without their capability, and drift between repeated runs.

use super::{Check, Class, Severity};

rules! {
    // ---------------------------------------------------------------- eras (server/discover)
    DISCOVER_CRASHED {
        code: "discover-crashed",
        class: Class::McpProtocol,
        check: Check::Initialize,
        severity: Severity::Warning,
        summary: "The server died (or stalled) because it was probed with `server/discover` first.",
        what: "Dual-era clients send `server/discover` before `initialize` to learn whether the server speaks the stateless 2026-07-28 era. This server exited or closed stdout on that first request, or answered it and then never completed `initialize`; in a fresh process without the probe the handshake works. The legacy checks come from that second process.",
        why: "Every client that supports both eras sends this probe first; a server that dies on an unknown method cannot be used by them at all.",
        example: "A hand-written server that calls `sys.exit(1)` when the first message is not `initialize`.",
        fix: "Answer unknown methods with a JSON-RPC error -32601 (Method not found) instead of exiting. The official SDKs already do.",
    }
    DISCOVER_UNEXPECTED_RESULT {
        code: "discover-unexpected-result",
        class: Class::McpProtocol,
        check: Check::Initialize,
        severity: Severity::Warning,
        summary: "The server answered `server/discover` with a result that is not a discover result.",
        what: "The reply to `server/discover` is a success whose result has no `supportedVersions` list naming a stateless revision. The guard treats the server as legacy-era and goes on with `initialize`.",
        why: "A legacy server should answer an unknown method with -32601; answering with a result makes dual-era clients believe it speaks the stateless era, and they then fail on every request.",
        example: "`server/discover` → `{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}` from a catch-all handler.",
        fix: "Answer methods you do not implement with error -32601 (Method not found). Do not return an empty result for unknown methods.",
    }
    DISCOVER_INVALID_RESULT {
        code: "discover-invalid-result",
        class: Class::McpProtocol,
        check: Check::Initialize,
        detail_codes: &["supported-versions-invalid", "capabilities-invalid", "server-info-invalid"],
        summary: "A stateless-era `server/discover` result is malformed.",
        what: "The server claims a stateless revision in `supportedVersions`, but the rest of its `DiscoverResult` breaks the 2026-07-28 schema: `supportedVersions` holds a non-string, `capabilities` is missing or not an object, or `_meta.io.modelcontextprotocol/serverInfo` lacks a string `name`/`version` (a warning).",
        why: "Clients read the capabilities from the discover result to decide which methods to call; a malformed result leaves them with nothing to use.",
        example: "{\"resultType\":\"complete\",\"supportedVersions\":[\"2026-07-28\"]}",
        fix: "Return `{resultType, supportedVersions, capabilities, _meta: {\"io.modelcontextprotocol/serverInfo\": {name, version}}}` as the 2026-07-28 schema defines it.",
    }
    RESULT_TYPE_MISSING {
        code: "result-type-missing",
        class: Class::McpProtocol,
        check: Check::JsonRpc,
        summary: "A stateless-era result has no `resultType`.",
        what: "On a server speaking the stateless 2026-07-28 era, a successful result lacks the `resultType` field (or it is not a string).",
        why: "The 2026-07-28 revision says servers implementing it MUST include `resultType`; clients use it to tell a complete result from an input request.",
        example: "`tools/list` → `{\"tools\":[]}` instead of `{\"resultType\":\"complete\",\"tools\":[]}`",
        fix: "Add `\"resultType\": \"complete\"` to every result. Upgrade to an SDK release that implements 2026-07-28.",
    }
    RESULT_CACHE_FIELDS_MISSING {
        code: "result-cache-fields-missing",
        class: Class::McpProtocol,
        check: Check::JsonRpc,
        summary: "A stateless-era cacheable result lacks `ttlMs` or `cacheScope`.",
        what: "On a server speaking the stateless 2026-07-28 era, the result of `server/discover`, a list method or `resources/read` lacks the `ttlMs` (integer) or `cacheScope` (`\"public\"`/`\"private\"`) field the schema requires on cacheable results.",
        why: "Clients and gateways decide from these fields how long a result may be reused and across which authorization contexts; the 2026-07-28 schema requires both, and schema-validating clients reject the result.",
        example: "`tools/list` → `{\"resultType\":\"complete\",\"tools\":[]}` without `ttlMs` and `cacheScope`",
        fix: "Add `\"ttlMs\": 0, \"cacheScope\": \"private\"` (or the values that fit) to every cacheable result.",
    }

    // ---------------------------------------------------------------- capability probes
    CAPABILITY_LIST_UNSUPPORTED {
        code: "capability-list-unsupported",
        class: Class::McpProtocol,
        check: Check::Capabilities,
        reference: true,
        summary: "An advertised capability's list method answered \"method not found\".",
        what: "The server advertised a capability (`tools`, `resources`, `prompts`) and then answered its list method with error -32601. For `resources/templates/list` this is a note: many servers (the SDKs' low-level servers among them) implement only `resources/list`, and clients read -32601 there as an empty list.",
        why: "Clients trust the advertised capabilities and call the list method right after the handshake; a -32601 there makes the whole feature look broken.",
        example: "capabilities `{\"prompts\":{}}`, then `prompts/list` → `{\"error\":{\"code\":-32601,\"message\":\"Method not found\"}}`",
        fix: "Advertise only the capabilities whose methods you implement. Register a list handler for every advertised capability, even when the list is empty.",
    }
    CAPABILITY_LIST_ERROR {
        code: "capability-list-error",
        class: Class::McpProtocol,
        check: Check::Capabilities,
        reference: true,
        summary: "An advertised capability's list method answered with an error.",
        what: "The list method of an advertised capability (`tools/list`, `resources/list`, `resources/templates/list`, `prompts/list`) answered with a JSON-RPC error other than -32601.",
        why: "Clients list tools, resources and prompts right after connecting; an error there hides the whole feature from users.",
        example: "`tools/list` → `{\"error\":{\"code\":-32603,\"message\":\"database unavailable\"}}`",
        fix: "Make list methods independent of external services, or answer with an empty list while they are unavailable. Read the error message in the report for the cause.",
    }
    CAPABILITY_LIST_TIMEOUT {
        code: "capability-list-timeout",
        class: Class::McpProtocol,
        check: Check::Capabilities,
        reference: true,
        summary: "An advertised capability's list method got no answer within the timeout.",
        what: "The list method of an advertised capability was sent and no response arrived within `--timeout` milliseconds while the process kept running.",
        why: "Clients wait for the lists before offering the server's features; a list that never comes freezes the client's start-up.",
        example: "A `resources/list` handler that awaits a network call with no timeout.",
        fix: "Answer list methods promptly (an empty list is fine). If listing is legitimately slow, raise `--timeout`.",
    }
    CAPABILITY_LIST_MISSING_RESPONSE {
        code: "capability-list-missing-response",
        class: Class::McpProtocol,
        check: Check::Capabilities,
        reference: true,
        summary: "The server exited or closed stdout while an advertised list method was waiting.",
        what: "The process exited (or closed stdout) after the guard sent the list method of an advertised capability and before the response arrived.",
        why: "The client's very first feature request kills the session.",
        example: "A `prompts/list` handler that raises an uncaught exception and takes the process down.",
        fix: "Catch errors in list handlers and answer with a JSON-RPC error instead of exiting. Read the stderr tail in the report for the cause.",
    }
    CAPABILITY_LIST_INVALID_RESULT {
        code: "capability-list-invalid-result",
        class: Class::McpProtocol,
        check: Check::Capabilities,
        detail_codes: &["not-an-object", "items-not-an-array", "next-cursor-invalid"],
        summary: "A `resources/list`, `resources/templates/list` or `prompts/list` result has the wrong shape.",
        what: "The result is not an object, its item list (`resources`, `resourceTemplates`, `prompts`) is missing or not an array, or `nextCursor` is present but not a string (`null` included).",
        why: "Clients validate list results against the schema; SDK clients reject the whole result, so none of the items reach the user.",
        example: "{\"resources\":[],\"nextCursor\":null}",
        fix: "Return the list as an array under its schema name. Omit `nextCursor` on the last page instead of sending `null`.",
    }
    NOTIFICATION_UNDECLARED_CAPABILITY {
        code: "notification-undeclared-capability",
        class: Class::McpProtocol,
        check: Check::Capabilities,
        severity: Severity::Warning,
        detail_codes: &[
            "logging",
            "tools-list-changed",
            "resources-list-changed",
            "prompts-list-changed",
            "resources-updated",
        ],
        summary: "The server sent a notification for a capability it did not declare.",
        what: "The server sent `notifications/message` without the `logging` capability, a `notifications/*/list_changed` without `listChanged: true` on that capability, or `notifications/resources/updated` without `resources.subscribe`.",
        why: "The spec ties these notifications to declared capabilities (servers that emit log messages MUST declare `logging`); clients that do not expect them may drop them or fail the session.",
        example: "capabilities `{\"tools\":{}}`, then `{\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}`",
        fix: "Declare the capability in `initialize` (`logging: {}`, `tools: {listChanged: true}`, ...), or stop sending the notification.",
    }

    // ---------------------------------------------------------------- pagination
    PAGINATION_CURSOR_REPEATED {
        code: "pagination-cursor-repeated",
        class: Class::McpProtocol,
        check: Check::Capabilities,
        summary: "A list method returned a `nextCursor` it had already returned: pagination never ends.",
        what: "Following `nextCursor` page by page, the guard received a cursor it had already followed. A client that trusts the cursor loops forever.",
        why: "Real clients follow cursors to the end: a cursor that does not advance makes them list the same items again and again (8 tools shown as 160) or hang.",
        example: "page 1 `{\"tools\":[...],\"nextCursor\":\"page-2\"}`, page 2 `{\"tools\":[...],\"nextCursor\":\"page-2\"}`",
        fix: "Return a cursor that points past the page just sent, and omit `nextCursor` on the last page.",
    }
    PAGINATION_DUPLICATE_ITEMS {
        code: "pagination-duplicate-items",
        class: Class::McpProtocol,
        check: Check::Capabilities,
        summary: "An item appeared on more than one page of a paginated list.",
        what: "A tool, prompt (by name), resource (by URI) or resource template (by URI template) that was already on an earlier page came back on a later page.",
        why: "Clients concatenate pages; duplicates show the same tool twice, and clients that key tools by name drop the whole list.",
        example: "page 1 lists `search`, page 2 lists `search` again",
        fix: "Compute pages from a stable order and make the cursor encode the position after the last item sent.",
    }
    PAGINATION_EMPTY_CURSOR {
        code: "pagination-empty-cursor",
        class: Class::McpProtocol,
        check: Check::Capabilities,
        severity: Severity::Warning,
        summary: "A list method returned `\"\"` as `nextCursor`.",
        what: "`nextCursor` is the empty string. Some clients read it as \"no more pages\", others send it back and restart from the first page. The guard stops there.",
        why: "The meaning of an empty cursor differs between clients, so the same server lists differently in each of them.",
        example: "{\"tools\":[...],\"nextCursor\":\"\"}",
        fix: "Omit `nextCursor` on the last page; use a non-empty opaque string otherwise.",
    }
    PAGINATION_PAGE_CAP {
        code: "pagination-page-cap",
        class: Class::McpProtocol,
        check: Check::Capabilities,
        severity: Severity::Warning,
        summary: "A list method still had more pages when the guard's page cap was reached.",
        what: "The guard followed `nextCursor` up to `--max-pages` pages (default 100) with new cursors each time and stopped.",
        why: "Either the list is enormous or the cursors never end; clients without a cap would keep requesting.",
        example: "a cursor that encodes an ever-increasing offset past the end of the list",
        fix: "Make the last page omit `nextCursor`. If the list is legitimately this long, raise `--max-pages`.",
    }

    // ---------------------------------------------------------------- tools
    TOOLS_LIST_INVALID_RESULT {
        code: "tools-list-invalid-result",
        class: Class::McpProtocol,
        check: Check::ToolSchema,
        reference: true,
        detail_codes: &["not-an-object", "tools-not-an-array", "tool-not-an-object", "next-cursor-invalid", "field-type"],
        summary: "The `tools/list` result has the wrong shape.",
        what: "The result is not an object, `tools` is missing or not an array, an entry is not an object, `nextCursor` is not a string, or a tool's `description`/`title` is not a string.",
        why: "SDK clients validate the result against the schema and drop it whole: the user sees no tools at all.",
        example: "{\"tools\":{\"echo\":{...}}}",
        fix: "Return `{\"tools\": [ {name, description, inputSchema}, ... ]}`. Use the official SDK's tool registration.",
    }
    TOOL_NAME_DUPLICATE {
        code: "tool-name-duplicate",
        class: Class::McpProtocol,
        check: Check::ToolSchema,
        reference: true,
        summary: "Two tools share one name.",
        what: "The same tool `name` appears more than once in `tools/list`.",
        why: "Tools are called by name; clients either reject the whole list or call the wrong tool.",
        example: "two tools named `search`",
        fix: "Give every tool a unique name, e.g. prefix by domain: `files_search`, `web_search`.",
    }
    TOOL_NAME_INVALID {
        code: "tool-name-invalid",
        class: Class::McpProtocol,
        check: Check::ToolSchema,
        reference: true,
        detail_codes: &["missing", "not-a-string", "spec-pattern"],
        summary: "A tool name is missing or breaks the spec's name rule `^[A-Za-z0-9_.-]{1,128}$`.",
        what: "A tool has no `name`, a non-string name, or a name with characters outside `A-Z a-z 0-9 _ - .` or longer than 128 characters (spaces, slashes, non-ASCII).",
        why: "MCP 2025-11-25 defines this rule, and clients enforce it: one bad name makes Claude Desktop or Cursor drop every tool of the server.",
        example: "\"name\": \"search files\"",
        fix: "Rename the tool with letters, digits, `_`, `-` and `.` only, at most 128 characters.",
    }
    TOOL_NAME_NOT_PORTABLE {
        code: "tool-name-not-portable",
        class: Class::McpProtocol,
        check: Check::ToolSchema,
        severity: Severity::Warning,
        detail_codes: &["strict-client"],
        summary: "A tool name is legal in MCP but rejected by strict clients (`^[a-zA-Z0-9_-]{1,64}$`).",
        what: "The name matches the spec rule but not the stricter rule several clients and model APIs enforce: no dots, at most 64 characters. A warning unless `--tool-name-rule strict-client` makes it an error.",
        why: "Clients that forward tools to model APIs with this rule reject or rename the tool; some drop the server's whole tool list.",
        example: "\"name\": \"files.read\"",
        fix: "Use `_` or `-` instead of `.`, and keep names at most 64 characters.",
    }
    TOOL_DESCRIPTION_MISSING {
        code: "tool-description-missing",
        class: Class::McpProtocol,
        check: Check::ToolSchema,
        severity: Severity::Warning,
        reference: true,
        summary: "A tool has no description.",
        what: "A tool in `tools/list` has no `description` (or an empty one).",
        why: "Models choose tools from their descriptions; a tool without one is rarely called correctly, and registries show it as low quality.",
        example: "{\"name\":\"echo\",\"inputSchema\":{\"type\":\"object\"}}",
        fix: "Add a one-sentence `description` saying what the tool does and when to use it.",
    }
    TOOL_INPUT_SCHEMA_INVALID {
        code: "tool-input-schema-invalid",
        class: Class::McpProtocol,
        check: Check::ToolSchema,
        reference: true,
        detail_codes: &["missing", "not-an-object", "not-object-type", "meta-schema"],
        summary: "A tool's `inputSchema` is missing, not an object schema, or not valid JSON Schema.",
        what: "`inputSchema` is missing, is not a JSON object, does not have `\"type\": \"object\"` at its root, or (from 2025-11-25, a warning before) is not valid against the meta-schema of its `$schema` dialect (2020-12 when absent).",
        why: "Clients turn the schema into a model's function definition; an invalid schema makes them drop the tool or the whole list.",
        example: "\"inputSchema\": {\"type\": \"object\", \"properties\": {\"n\": {\"type\": \"integr\"}}}",
        fix: "Declare `{\"type\": \"object\", \"properties\": {...}}` and check it with a JSON Schema validator for its dialect. The message names the failing keyword.",
    }
    TOOL_INPUT_SCHEMA_REQUIRED_MISSING {
        code: "tool-input-schema-required-missing",
        class: Class::McpProtocol,
        check: Check::ToolSchema,
        reference: true,
        summary: "A tool's `inputSchema.required` names a property that `properties` does not define.",
        what: "An entry of `inputSchema.required` has no matching key in `inputSchema.properties`.",
        why: "No argument object can satisfy the schema the model sees: the model cannot know the required property's type, and strict clients reject the tool.",
        example: "{\"type\":\"object\",\"properties\":{\"q\":{\"type\":\"string\"}},\"required\":[\"query\"]}",
        fix: "Add the property to `properties` or remove it from `required` (check for a renamed parameter).",
    }
    TOOL_OUTPUT_SCHEMA_INVALID {
        code: "tool-output-schema-invalid",
        class: Class::McpProtocol,
        check: Check::ToolSchema,
        detail_codes: &["not-an-object", "not-object-type", "meta-schema"],
        summary: "A tool's `outputSchema` is not an object schema or not valid JSON Schema.",
        what: "`outputSchema` is present but not a JSON object, lacks `\"type\": \"object\"` at its root, or (from 2025-11-25, a warning before) is invalid against its dialect's meta-schema.",
        why: "Clients validate `structuredContent` against this schema; with an invalid schema every call result is rejected.",
        example: "\"outputSchema\": {\"type\": \"array\"}",
        fix: "Describe the structured result as `{\"type\": \"object\", \"properties\": {...}}`; wrap lists in an object property.",
    }
    TOOL_OUTPUT_SCHEMA_REQUIRED_MISSING {
        code: "tool-output-schema-required-missing",
        class: Class::McpProtocol,
        check: Check::ToolSchema,
        summary: "A tool's `outputSchema.required` names a property that `properties` does not define.",
        what: "An entry of `outputSchema.required` has no matching key in `outputSchema.properties`.",
        why: "The schema is self-contradictory: results cannot be checked meaningfully and generated client types are wrong.",
        example: "{\"type\":\"object\",\"properties\":{\"temp\":{\"type\":\"number\"}},\"required\":[\"temperature\"]}",
        fix: "Add the property to `properties` or remove it from `required`.",
    }
    TOOL_SCHEMA_DIALECT_UNKNOWN {
        code: "tool-schema-dialect-unknown",
        class: Class::McpProtocol,
        check: Check::ToolSchema,
        severity: Severity::Warning,
        summary: "A tool schema declares a `$schema` dialect the guard cannot validate.",
        what: "`inputSchema.$schema` or `outputSchema.$schema` names a URI other than the published JSON Schema drafts (draft-04, -06, -07, 2019-09, 2020-12), so its validity could not be checked.",
        why: "MCP 2025-11-25 requires clients to support 2020-12 and lets them reject other dialects; an unknown dialect is likely rejected.",
        example: "\"$schema\": \"https://example.com/my-dialect\"",
        fix: "Omit `$schema` (2020-12 is the default) or use a published dialect URI, e.g. `https://json-schema.org/draft/2020-12/schema`.",
    }

    // ---------------------------------------------------------------- prompts and resources
    PROMPT_INVALID {
        code: "prompt-invalid",
        class: Class::McpProtocol,
        check: Check::Capabilities,
        detail_codes: &["not-an-object", "name-missing", "arguments-not-an-array", "argument-invalid"],
        summary: "A prompt in `prompts/list` breaks the schema.",
        what: "A prompt is not an object, has no string `name`, its `arguments` is not an array, or an argument lacks a string `name` or has a non-boolean `required`.",
        why: "Clients fetch prompts by name and build forms from their arguments; SDK clients reject the whole list when one prompt is malformed.",
        example: "{\"prompts\":[{\"description\":\"Summarize\",\"arguments\":{\"text\":{}}}]}",
        fix: "Return `{name, description?, arguments?: [{name, description?, required?}]}` for every prompt.",
    }
    PROMPT_NAME_DUPLICATE {
        code: "prompt-name-duplicate",
        class: Class::McpProtocol,
        check: Check::Capabilities,
        severity: Severity::Warning,
        summary: "Two prompts share one name.",
        what: "The same prompt `name` appears more than once in `prompts/list`.",
        why: "Prompts are fetched by name with `prompts/get`; only one of the two can ever be reached.",
        example: "two prompts named `summarize`",
        fix: "Give every prompt a unique name.",
    }
    RESOURCE_INVALID {
        code: "resource-invalid",
        class: Class::McpProtocol,
        check: Check::Capabilities,
        detail_codes: &["not-an-object", "uri-missing", "uri-invalid", "name-missing"],
        summary: "A resource in `resources/list` breaks the schema.",
        what: "A resource is not an object, has no string `uri`, has a `uri` that is not an absolute URI (no `scheme:`), or has no string `name`.",
        why: "Clients read resources by URI and show them by name; SDK clients reject the whole list when one resource is malformed.",
        example: "{\"resources\":[{\"uri\":\"notes.txt\",\"name\":\"notes\"}]}",
        fix: "Give every resource an absolute `uri` (e.g. `file:///notes.txt`, `note://1`) and a `name`.",
    }
    RESOURCE_TEMPLATE_INVALID {
        code: "resource-template-invalid",
        class: Class::McpProtocol,
        check: Check::Capabilities,
        detail_codes: &["not-an-object", "uri-template-missing", "name-missing"],
        summary: "A resource template in `resources/templates/list` breaks the schema.",
        what: "A resource template is not an object, has no string `uriTemplate`, or has no string `name`.",
        why: "Clients expand templates into URIs to read; SDK clients reject the whole list when one template is malformed.",
        example: "{\"resourceTemplates\":[{\"uri\":\"note://{id}\",\"name\":\"note\"}]}",
        fix: "Return `{uriTemplate, name, description?, mimeType?}` for every template (RFC 6570 template in `uriTemplate`).",
    }

    // ---------------------------------------------------------------- tool results
    TOOL_RESULT_INVALID {
        code: "tool-result-invalid",
        class: Class::McpProtocol,
        check: Check::Operation,
        detail_codes: &[
            "not-an-object",
            "content-missing",
            "content-not-an-array",
            "content-block-invalid",
            "content-type-unknown",
            "is-error-not-boolean",
            "structured-content-not-an-object",
        ],
        summary: "A `tools/call` result breaks the schema.",
        what: "The result of a tool call is not an object, has no `content` array, has a content block without a known `type` for the negotiated revision or without its required fields (`text`, `data`+`mimeType`, `resource`, `uri`+`name`), an `isError` that is not a boolean, or a `structuredContent` that is not an object.",
        why: "Clients validate call results; a malformed result is shown as a failed call and the model never sees the output.",
        example: "{\"content\":\"42\"}",
        fix: "Return `{\"content\": [{\"type\": \"text\", \"text\": \"...\"}]}`, plus `isError: true` for tool-level failures.",
    }
    TOOL_RESULT_IS_ERROR {
        code: "tool-result-is-error",
        class: Class::McpProtocol,
        check: Check::Operation,
        summary: "A tool call the user asked for returned `isError: true`.",
        what: "A safe tool call (config `safeToolCalls`) or an explicit `tools/call` request succeeded at the protocol level but the tool reported a failure with `isError: true`. An error by default; `--allow-operation-errors` makes it a warning.",
        why: "The call was listed because it is expected to work; a tool-level error means the tool is broken for users with these arguments.",
        example: "{\"content\":[{\"type\":\"text\",\"text\":\"API key missing\"}],\"isError\":true}",
        fix: "Read the content of the result in the report for the tool's message. Fix the tool or the call's arguments, or pass `--allow-operation-errors` if the error is expected.",
    }
    TOOL_RESULT_STRUCTURED_CONTENT_MISSING {
        code: "tool-result-structured-content-missing",
        class: Class::McpProtocol,
        check: Check::Operation,
        summary: "A tool with an `outputSchema` returned no `structuredContent`.",
        what: "The tool declares `outputSchema` in `tools/list`, and a successful call (no `isError`) returned a result without `structuredContent`.",
        why: "From 2025-06-18 servers MUST return structured results conforming to a declared output schema; clients such as Gemini fail the call when it is missing.",
        example: "outputSchema `{\"type\":\"object\",\"properties\":{\"temp\":{\"type\":\"number\"}}}`, result `{\"content\":[{\"type\":\"text\",\"text\":\"21\"}]}`",
        fix: "Return `structuredContent` matching the output schema (and, for older clients, the same data serialized in a text block), or remove `outputSchema`.",
    }
    TOOL_RESULT_STRUCTURED_CONTENT_INVALID {
        code: "tool-result-structured-content-invalid",
        class: Class::McpProtocol,
        check: Check::Operation,
        summary: "A tool's `structuredContent` does not conform to its `outputSchema`.",
        what: "The tool declares `outputSchema`, and the `structuredContent` of a successful call fails validation against it.",
        why: "Clients MUST validate structured results against the output schema; a result that fails is rejected as an error.",
        example: "outputSchema requires `temp: number`, result `{\"structuredContent\":{\"temp\":\"21\"}}`",
        fix: "Make the handler return data of the declared shape, or correct the schema. The message names the failing path and keyword.",
    }

    // ---------------------------------------------------------------- repeat and drift
    REPEAT_PROTOCOL_DRIFT {
        code: "repeat-protocol-drift",
        class: Class::McpProtocol,
        check: Check::Repeat,
        severity: Severity::Warning,
        reference: true,
        summary: "The negotiated protocol revision changed between repeated runs.",
        what: "With `--repeat`, a run negotiated a different `protocolVersion` (or era) than the first initialized run.",
        why: "Clients cache what a server supports; a server that answers differently on a cold and a warm start behaves differently for users at random.",
        example: "run 1 negotiated `2025-11-25`, run 2 `2025-06-18`",
        fix: "Make version negotiation deterministic: pick from a fixed list, not from state left by an earlier run.",
    }
    REPEAT_CAPABILITY_DRIFT {
        code: "repeat-capability-drift",
        class: Class::McpProtocol,
        check: Check::Repeat,
        severity: Severity::Warning,
        reference: true,
        summary: "The advertised capability keys changed between repeated runs.",
        what: "With `--repeat`, a run advertised a different set of capability keys than the first initialized run.",
        why: "A capability that appears only on warm starts (after a cache fills, a plugin loads) is invisible to half the users.",
        example: "run 1 `[\"tools\"]`, run 2 `[\"prompts\",\"tools\"]`",
        fix: "Declare capabilities from static configuration before answering `initialize`, not from work that finishes later.",
    }
    REPEAT_TOOL_DRIFT {
        code: "repeat-tool-drift",
        class: Class::McpProtocol,
        check: Check::Repeat,
        severity: Severity::Warning,
        reference: true,
        summary: "The tool names or count changed between repeated runs.",
        what: "With `--repeat`, `tools/list` returned tools that were added, removed or counted differently than in the first run (order is ignored).",
        why: "Users see a different tool set on each start; registries cannot describe the server reliably.",
        example: "run 1 `[\"read\",\"search\"]`, run 2 `[\"read\"]`",
        fix: "Register tools before answering `initialize`; if tools load asynchronously, send `notifications/tools/list_changed` when they are ready and declare `listChanged`.",
    }
    REPEAT_LIST_SHAPE_DRIFT {
        code: "repeat-list-shape-drift",
        class: Class::McpProtocol,
        check: Check::Repeat,
        severity: Severity::Warning,
        reference: true,
        summary: "The resource, template or prompt counts changed between repeated runs.",
        what: "With `--repeat`, `resources/list`, `resources/templates/list` or `prompts/list` returned a different number of items than in the first run.",
        why: "A list that depends on start-up timing is unreliable for users and registries.",
        example: "run 1: 3 resources, run 2: 0 resources",
        fix: "Build lists from stable state before answering, or announce later changes with `list_changed` notifications.",
    }
    REPEAT_OUTCOME_DRIFT {
        code: "repeat-outcome-drift",
        class: Class::McpProtocol,
        check: Check::Repeat,
        severity: Severity::Warning,
        summary: "Some repeated runs passed and others failed.",
        what: "With `--repeat`, at least one run had error-level findings and at least one had none: the server is flaky.",
        why: "Intermittent failures are the hardest for users to report; the failing run's issues (tagged with `run`) show what differs.",
        example: "run 1 passed, run 2 failed with `initialize-timeout`",
        fix: "Read the issues of the failing run. Look for races at start-up (slow imports, first-run downloads, shared caches).",
    }
}
