//! Offload's own tools, one module each: a tool's name, title, description, input schema (from
//! its parameters' type), output schema, annotations, the scopes a call needs, the kind of its
//! audit event and its handler are declared together by implementing [`OwnTool`], and
//! [`REGISTRY`] lists the tools in the order clients show them. Adding a tool is a module and a
//! line here. Tool names and parameter names are part of the contract.

mod call_tool;
mod call_tool_and_store;
mod call_tool_with_file_content;
mod get_file_schema;
mod list_allowed_directories;
mod list_available_tools;
mod list_tool_details;
mod query_file;
mod read_file;
mod run_script;
mod summarize_file;

use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;
use rmcp::handler::server::common::{schema_for_output, schema_for_type};
use rmcp::model::{CallToolResult, JsonObject, Tool, ToolAnnotations};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

pub use call_tool::CallTool;
pub use call_tool_and_store::CallToolAndStore;
pub use call_tool_with_file_content::CallToolWithFileContent;
pub use get_file_schema::GetFileSchema;
pub use list_allowed_directories::ListAllowedDirectories;
pub use list_available_tools::ListAvailableTools;
pub use list_tool_details::ListToolDetails;
pub use query_file::QueryFile;
pub use read_file::ReadFile;
pub use run_script::RunScript;
pub use summarize_file::SummarizeFile;

use super::scopes;
use crate::Engine;
use crate::access::Scope;
use crate::events::EventKind;

/// What the tool modules share.
mod prelude {
    pub use std::sync::Arc;

    pub use rmcp::model::{CallToolResult, JsonObject};

    pub use super::{Ctx, Hints, Output, OwnTool};
    pub use crate::Engine;
    pub use crate::access::Scope;
    pub use crate::events::EventKind;
    pub(in crate::server) use crate::server::params;
}

/// The request a call came in.
pub type Ctx = RequestContext<RoleServer>;

/// One of Offload's own tools.
pub trait OwnTool {
    /// The arguments: their JSON Schema, compacted, is the input schema.
    type Params: DeserializeOwned + JsonSchema + Send + 'static;
    const NAME: &'static str;
    const TITLE: &'static str;
    /// Written for a model: every byte reaches every user's model on every request.
    const DESCRIPTION: &'static str;
    /// What the tool does, as MCP's annotations say it.
    const HINTS: Hints;
    /// The structured answer's type and the fields a caller most often reads; `None` for
    /// answers that are an upstream tool's own.
    const OUTPUT: Option<Output> = None;
    /// The scopes a call needs when Offload is served over HTTP.
    const SCOPES: &'static [Scope] = &[Scope::Read];

    /// The scopes a call with these arguments needs (`SCOPES` unless they depend on them).
    fn scopes(_args: Option<&JsonObject>) -> Vec<Scope> {
        Self::SCOPES.to_vec()
    }

    /// The kind of the call's audit event.
    fn event(_args: Option<&JsonObject>) -> EventKind {
        EventKind::Tool
    }

    fn call(
        engine: &Arc<Engine>,
        params: Self::Params,
        ctx: &Ctx,
    ) -> impl Future<Output = CallToolResult> + Send;
}

/// Honest hints. (MCP gives the destructive and idempotent hints meaning only for tools that
/// do not only read.)
pub enum Hints {
    /// Only reads, on this machine.
    Reads,
    /// Only reads, and asks upstream servers.
    AsksUpstreams,
    /// Only reads, and reaches beyond the machine only for URLs the user allows (fetched into
    /// a stored download).
    ReadsFiles,
    /// Calls an upstream tool, which may change or delete anything.
    CallsUpstream,
    /// Reads; may create a new file, never replaces one.
    CreatesFiles,
    /// Runs a program that may call any upstream tool.
    RunsScripts,
}

impl Hints {
    fn annotations(&self) -> ToolAnnotations {
        let reads = |open_world| {
            ToolAnnotations::new()
                .read_only(true)
                .open_world(open_world)
        };
        let writes = |destructive, open_world| {
            ToolAnnotations::new()
                .read_only(false)
                .destructive(destructive)
                .idempotent(false)
                .open_world(open_world)
        };
        match self {
            Self::Reads => reads(false),
            Self::AsksUpstreams | Self::ReadsFiles => reads(true),
            Self::CallsUpstream | Self::RunsScripts => writes(true, true),
            Self::CreatesFiles => writes(false, false),
        }
    }
}

/// A structured answer's output schema: its type's top-level fields a caller most often reads,
/// named with spaces between (see [`with_error`]).
pub struct Output {
    schema: fn(&[&str]) -> Arc<JsonObject>,
    fields: &'static str,
}

impl Output {
    pub const fn of<T: JsonSchema + std::any::Any>(fields: &'static str) -> Self {
        Self {
            schema: with_error::<T>,
            fields,
        }
    }
}

/// A tool as the server holds it: its declaration's parts as functions.
pub struct Registered {
    pub name: &'static str,
    pub definition: fn() -> Tool,
    pub scopes: fn(Option<&JsonObject>) -> Vec<Scope>,
    pub event: fn(Option<&JsonObject>) -> EventKind,
    pub call: Handler,
}

/// A call's arguments parsed into the tool's parameters and handled.
pub type Handler = for<'a> fn(
    &'a Arc<Engine>,
    Option<JsonObject>,
    &'a Ctx,
) -> BoxFuture<'a, Result<CallToolResult, McpError>>;

const fn register<T: OwnTool + 'static>() -> Registered {
    Registered {
        name: T::NAME,
        definition: definition::<T>,
        scopes: T::scopes,
        event: T::event,
        call: call::<T>,
    }
}

/// Every tool, in the order clients show them.
pub const REGISTRY: [Registered; 11] = [
    register::<ListAllowedDirectories>(),
    register::<ListAvailableTools>(),
    register::<ListToolDetails>(),
    register::<CallTool>(),
    register::<CallToolAndStore>(),
    register::<CallToolWithFileContent>(),
    register::<GetFileSchema>(),
    register::<SummarizeFile>(),
    register::<ReadFile>(),
    register::<QueryFile>(),
    register::<RunScript>(),
];

/// The tool named `name`.
pub fn find(name: &str) -> Option<&'static Registered> {
    REGISTRY.iter().find(|t| t.name == name)
}

/// The scopes a call of `tool` with `args` needs: one of Offload's own tools declares its own;
/// any other name is an upstream tool listed directly.
pub fn scopes_needed(tool: &str, args: Option<&JsonObject>) -> Vec<Scope> {
    find(tool).map_or_else(|| scopes::upstream_call(args), |t| (t.scopes)(args))
}

/// The kind of the audit event of a call of `tool` with `args`.
pub fn event_kind(tool: &str, args: Option<&JsonObject>) -> EventKind {
    find(tool).map_or(EventKind::Tool, |t| (t.event)(args))
}

/// Every tool's definition, in the order clients show them.
pub fn definitions() -> Vec<Tool> {
    REGISTRY.iter().map(|t| (t.definition)()).collect()
}

/// [`definitions`], made once: a server for each session, or for each stateless (2026-07-28)
/// request, shares them instead of building their schemas again.
pub fn shared_definitions() -> Arc<Vec<Tool>> {
    static MADE: std::sync::LazyLock<Arc<Vec<Tool>>> =
        std::sync::LazyLock::new(|| Arc::new(definitions()));
    MADE.clone()
}

fn definition<T: OwnTool>() -> Tool {
    let mut tool = Tool::new(
        T::NAME,
        T::DESCRIPTION,
        compact_input(schema_for_type::<T::Params>()),
    );
    tool.title = Some(T::TITLE.to_owned());
    tool.output_schema =
        T::OUTPUT.map(|o| (o.schema)(&o.fields.split_whitespace().collect::<Vec<_>>()));
    tool.annotations = Some(T::HINTS.annotations());
    tool
}

/// Arguments that do not fit the parameters are the protocol's error (-32602), naming them.
fn call<'a, T: OwnTool + 'static>(
    engine: &'a Arc<Engine>,
    args: Option<JsonObject>,
    ctx: &'a Ctx,
) -> BoxFuture<'a, Result<CallToolResult, McpError>> {
    Box::pin(async move {
        let value = Value::Object(args.unwrap_or_default());
        let params: T::Params = serde_json::from_value(value).map_err(|e| {
            McpError::invalid_params(format!("{}: invalid arguments: {e}", T::NAME), None)
        })?;
        Ok(T::call(engine, params, ctx).await)
    })
}

/// The output schema of `T`, kept small (a model pays for every byte of it on every turn):
/// the top-level fields named in `fields` (those a caller most often reads; the others are
/// allowed, as the schema does not close the object) with their JSON types only — names tell
/// a model what comes back, the rest is said in the answers. No field is required, so an
/// error answer (`{"error": {code, message}}`, also listed) validates too.
fn with_error<T: JsonSchema + std::any::Any>(fields: &[&str]) -> Arc<JsonObject> {
    let full = schema_for_output::<T>();
    let defs = full.get("$defs").cloned().unwrap_or(Value::Null);
    let mut all = serde_json::Map::new();
    collect_properties(&Value::Object((*full).clone()), &defs, &mut all);
    let mut properties: serde_json::Map<String, Value> = fields
        .iter()
        .map(|f| {
            let found = all.get(*f).cloned();
            debug_assert!(found.is_some(), "{f} is not a field of the output");
            ((*f).to_owned(), found.unwrap_or_else(|| json!({})))
        })
        .collect();
    properties.insert("error".into(), json!({"type": "object"}));
    let mut root = serde_json::Map::new();
    root.insert("type".into(), json!("object"));
    root.insert("properties".into(), Value::Object(properties));
    Arc::new(root)
}

/// The top-level fields of `schema` (through `$ref`, `anyOf`, `oneOf`, `allOf`), each as
/// `{"type": ...}` (or `{}` when it is not one JSON type).
fn collect_properties(schema: &Value, defs: &Value, out: &mut serde_json::Map<String, Value>) {
    if let Some(name) = schema["$ref"]
        .as_str()
        .and_then(|r| r.strip_prefix("#/$defs/"))
    {
        return collect_properties(&defs[name], defs, out);
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        for variant in schema[key].as_array().into_iter().flatten() {
            collect_properties(variant, defs, out);
        }
    }
    for (name, property) in schema["properties"].as_object().into_iter().flatten() {
        let shallow = match property.get("type") {
            Some(t) => json!({"type": t}),
            None => json!({}),
        };
        match out.get(name) {
            Some(seen) if *seen != shallow => {
                out.insert(name.clone(), json!({}));
            }
            Some(_) => {}
            None => {
                out.insert(name.clone(), shallow);
            }
        }
    }
}

/// An input schema without what costs bytes and tells a model nothing: the `$schema` and
/// `title` keys, `null` in the types of optional fields (leaving one out is the way to say
/// nothing), `default: null`, integer formats, line breaks inside descriptions.
fn compact_input(schema: Arc<JsonObject>) -> Arc<JsonObject> {
    let mut schema = (*schema).clone();
    schema.remove("$schema");
    schema.remove("title");
    // Unknown arguments are refused all the same (-32602, naming the known ones).
    schema.remove("additionalProperties");
    let required: Vec<Value> = schema
        .get("required")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if let Some(Value::Object(properties)) = schema.get_mut("properties") {
        for (name, property) in properties.iter_mut() {
            let Value::Object(p) = property else { continue };
            if let Some(Value::Array(types)) = p.get("type")
                && !required.contains(&Value::String(name.clone()))
            {
                let kept: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
                if kept.len() == 1 {
                    p.insert("type".into(), kept[0].clone());
                }
            }
            // Defaults worth knowing are in the descriptions.
            p.remove("default");
            if p.get("minimum") == Some(&json!(0)) {
                p.remove("minimum");
            }
            if p.get("additionalProperties") == Some(&json!(true)) {
                p.remove("additionalProperties");
            }
            if p.get("format")
                .and_then(Value::as_str)
                .is_some_and(|f| f.starts_with("uint") || f.starts_with("int"))
            {
                p.remove("format");
            }
            if let Some(Value::String(d)) = p.get_mut("description") {
                *d = d.split_whitespace().collect::<Vec<_>>().join(" ");
            }
        }
    }
    Arc::new(schema)
}

#[cfg(test)]
mod shape {
    use super::*;

    /// Every tool has a title, a description, an object input schema and honest hints: the
    /// destructive and idempotent hints where MCP gives them meaning (tools that do not only
    /// read). Examples are kept for the tools whose arguments are not obvious from their names.
    #[test]
    fn every_tool_has_title_description_schema_and_annotations() {
        for t in definitions() {
            assert!(t.title.is_some(), "{}", t.name);
            let description = t.description.as_deref().unwrap_or_default();
            assert!(description.len() > 40, "{}", t.name);
            if matches!(
                t.name.as_ref(),
                <CallToolWithFileContent as OwnTool>::NAME | <QueryFile as OwnTool>::NAME
            ) {
                assert!(description.contains("Example"), "{}", t.name);
            }
            assert_eq!(
                t.input_schema.get("type").and_then(|v| v.as_str()),
                Some("object"),
                "{}",
                t.name
            );
            let a = t.annotations.as_ref().unwrap();
            assert!(a.read_only_hint.is_some(), "{}", t.name);
            assert!(a.open_world_hint.is_some(), "{}", t.name);
            if a.read_only_hint == Some(false) {
                assert!(
                    a.destructive_hint.is_some() && a.idempotent_hint.is_some(),
                    "{}",
                    t.name
                );
            }
            if let Some(out) = &t.output_schema {
                assert_eq!(
                    out.get("type").and_then(|v| v.as_str()),
                    Some("object"),
                    "{}",
                    t.name
                );
            }
        }
    }
}

#[cfg(test)]
mod golden {
    //! Every byte of Offload's tool definitions reaches every user's model on every request, so a
    //! change to one is reviewed as a diff of `tests/golden/tools.json` (with each tool's size).

    const PATH: &str = "tests/golden/tools.json";

    fn sizes(list: &serde_json::Value) -> Vec<(String, usize)> {
        list.as_array()
            .into_iter()
            .flatten()
            .map(|t| {
                let name = t["name"].as_str().unwrap_or_default().to_owned();
                (name, serde_json::to_string(t).map_or(0, |s| s.len()))
            })
            .collect()
    }

    #[test]
    fn tool_definitions_match_the_golden_file() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(PATH);
        let now = serde_json::to_value(super::definitions()).expect("tools serialize");
        let want = serde_json::to_string_pretty(&now).expect("pretty") + "\n";
        if std::env::var_os("OFFLOAD_UPDATE_GOLDEN").is_some() {
            std::fs::write(&path, &want).expect("write the golden file");
            return;
        }
        let have = std::fs::read_to_string(&path).unwrap_or_default();
        if have == want {
            return;
        }
        let before: serde_json::Value = serde_json::from_str(&have).unwrap_or_default();
        let old = sizes(&before);
        let mut table = vec!["tool: bytes before -> after (compact JSON)".to_owned()];
        for (name, after) in sizes(&now) {
            let was = old.iter().find(|(n, _)| *n == name).map(|(_, b)| *b);
            match was {
                Some(b) if b == after => {}
                Some(b) => table.push(format!("  {name}: {b} -> {after}")),
                None => table.push(format!("  {name}: new, {after}")),
            }
        }
        let diff = similar::TextDiff::from_lines(&have, &want)
            .unified_diff()
            .context_radius(2)
            .header(PATH, "now")
            .to_string();
        panic!(
            "Offload's tool definitions changed. If that is meant, review the bytes and run \
             `OFFLOAD_UPDATE_GOLDEN=1 cargo test -p offload-engine golden`.\n{}\n{diff}",
            table.join("\n")
        );
    }
}
