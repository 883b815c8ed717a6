//! The scopes each request needs when Offload is served over HTTP (see `crate::access`):
//! `read` for the file tools, listings and resources; `call` for upstream tools; `store` for
//! writing into roots on purpose. A big answer stored automatically (by `call_tool` or a direct
//! tool) is part of the call and needs no `store`.

use rmcp::model::{Extensions, JsonObject};
use serde_json::Value;

use crate::access::{Scope, grant_of};
use crate::{ErrorCode, ToolError};

/// The scopes a call of an upstream tool needs (`call_tool`, a direct tool): `call`, and
/// `read` too when a `$file` in its arguments reads a file.
pub fn upstream_call(args: Option<&JsonObject>) -> Vec<Scope> {
    if args.is_some_and(|a| a.values().any(names_a_file)) {
        vec![Scope::Read, Scope::Call]
    } else {
        vec![Scope::Call]
    }
}

/// Whether a value holds a `{"$file": ...}` reference anywhere.
fn names_a_file(value: &Value) -> bool {
    match value {
        Value::Object(map) => map.contains_key("$file") || map.values().any(names_a_file),
        Value::Array(items) => items.iter().any(names_a_file),
        _ => false,
    }
}

/// The refusal for a request its caller may not make; `None` when it may (always on stdio and
/// the local socket).
pub fn refusal(extensions: &Extensions, what: &str, needed: &[Scope]) -> Option<ToolError> {
    let grant = grant_of(extensions)?;
    let missing = grant.missing(needed);
    if missing.is_empty() {
        return None;
    }
    let missing: Vec<&str> = missing.iter().map(|s| s.as_str()).collect();
    tracing::warn!(who = %grant.who, what, missing = ?missing, "refused: outside the caller's scopes");
    Some(
        ToolError::new(
            ErrorCode::Forbidden,
            format!(
                "{what} needs the scope(s) {} that this access token does not have; ask the person who runs Offload for a token with them",
                missing.join(", ")
            ),
        )
        .with("missing_scopes", missing),
    )
}

#[cfg(test)]
mod tests {
    use super::super::tools::{
        CallTool, CallToolAndStore, OwnTool, ReadFile, scopes_needed as needed,
    };
    use super::*;
    use serde_json::json;

    fn args(v: Value) -> JsonObject {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn each_tool_needs_what_it_does() {
        assert_eq!(needed(ReadFile::NAME, None), vec![Scope::Read]);
        assert_eq!(needed(CallTool::NAME, None), vec![Scope::Call]);
        assert_eq!(
            needed(CallToolAndStore::NAME, None),
            vec![Scope::Call, Scope::Store]
        );
        assert_eq!(
            needed(
                "everything__echo",
                Some(&args(json!({"a": {"b": [{"$file": "x.csv"}]}})))
            ),
            vec![Scope::Read, Scope::Call]
        );
        assert_eq!(
            needed("everything__echo", Some(&args(json!({"message": "$file"})))),
            vec![Scope::Call]
        );
    }

    #[test]
    fn local_sessions_are_never_refused() {
        assert!(refusal(&Extensions::new(), "read_file", &[Scope::Store]).is_none());
    }
}
