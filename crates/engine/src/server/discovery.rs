//! `list_allowed_directories`, `list_available_tools` and `list_tool_details`.

use rmcp::model::{CallToolResult, JsonObject, Tool, ToolAnnotations};
use schemars::JsonSchema;
use serde::Serialize;

use super::{answer, clip, params};
use crate::upstream::{ServerStatus, UpstreamError, closest};
use crate::{Engine, ToolError};

#[derive(Debug, Serialize, JsonSchema)]
pub struct AllowedDirectories {
    pub directories: Vec<Directory>,
    /// Where stored responses go and relative paths resolve; null when every root is read-only.
    pub default_directory: Option<String>,
    /// Configured directories that are not in use (missing, not a directory), with the reason.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unavailable: Vec<crate::roots::Unavailable>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Directory {
    pub path: String,
    pub writable: bool,
    pub default: bool,
}

pub fn list_allowed_directories(engine: &Engine) -> CallToolResult {
    let roots = engine.roots();
    let default = roots.default_dir();
    let directories: Vec<Directory> = roots
        .list()
        .iter()
        .map(|r| Directory {
            path: r.path.display().to_string(),
            writable: r.writable,
            default: Some(r.path.as_path()) == default,
        })
        .chain(roots.buckets().iter().map(|b| Directory {
            path: b.url.to_string(),
            writable: b.writable,
            default: false,
        }))
        .collect();
    let text = directories
        .iter()
        .map(|d| {
            let mut flags = vec![if d.writable {
                "read-write"
            } else {
                "read-only"
            }];
            if d.default {
                flags.push("default");
            }
            format!("{} ({})", d.path, flags.join(", "))
        })
        .chain(
            roots
                .unavailable()
                .iter()
                .map(|u| format!("{} (not available: {})", u.path, u.reason)),
        )
        .collect::<Vec<_>>()
        .join("\n");
    let out = AllowedDirectories {
        directories,
        default_directory: default.map(|p| p.display().to_string()),
        unavailable: roots.unavailable().to_vec(),
    };
    answer::structured(&out, text)
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct AvailableTools {
    pub tools: Vec<ListedTool>,
    pub servers: Vec<ListedServer>,
    /// Present when the list was cut or shortened to fit the answer budget.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ListedTool {
    pub server: String,
    pub tool: String,
    pub description: String,
    #[serde(rename = "inputSchema", skip_serializing_if = "Option::is_none")]
    pub input_schema: Option<JsonObject>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub annotations: Option<ToolAnnotations>,
}

pub use crate::available::needs_tasks;

#[derive(Debug, Serialize, JsonSchema)]
pub struct ListedServer {
    pub name: String,
    /// One of ready, starting, error, disabled.
    pub status: String,
    pub tool_count: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl From<&ServerStatus> for ListedServer {
    fn from(s: &ServerStatus) -> Self {
        let status = serde_json::to_value(s.status)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        Self {
            name: s.name.clone(),
            status,
            tool_count: s.tool_count.unwrap_or(0),
            error: s.error.clone(),
        }
    }
}

/// Descriptions in the short list are cut to this many characters.
const SHORT_DESCRIPTION: usize = 240;

pub async fn list_available_tools(
    engine: &Engine,
    p: params::ListAvailableTools,
) -> CallToolResult {
    if let Some(name) = &p.filter_by_server
        && let Err(e) = engine.pool.get(name)
    {
        return answer::error(&ToolError::from(e));
    }
    let listed = engine.pool.list_tools(p.filter_by_server.as_deref()).await;
    let servers: Vec<ListedServer> = listed
        .iter()
        .map(|s| {
            let mut l = ListedServer::from(&s.status);
            l.tool_count = s.tools.len();
            l
        })
        .collect();
    // Tools the user turned off or that are held for review are not offered.
    let (usable, held) = crate::available::usable(engine).await;
    let usable_names: std::collections::HashSet<(&str, &str)> = usable
        .iter()
        .flat_map(|(s, tools)| tools.iter().map(move |t| (s.as_str(), t.name.as_ref())))
        .collect();
    let mut candidates: Vec<(&str, &Tool)> = listed
        .iter()
        .flat_map(|s| s.tools.iter().map(move |t| (s.status.name.as_str(), t)))
        // Task-only tools are listed too, marked not callable.
        .filter(|(server, t)| usable_names.contains(&(*server, t.name.as_ref())))
        .collect();
    if let Some(q) = p.query.as_deref().filter(|q| !q.trim().is_empty()) {
        candidates = super::search::rank(q, candidates);
    }
    let mut tools: Vec<ListedTool> = candidates
        .into_iter()
        .map(|(server, t)| ListedTool {
            server: server.to_owned(),
            tool: t.name.to_string(),
            description: {
                let d = t.description.as_deref().unwrap_or("");
                if p.detailed {
                    d.to_owned()
                } else {
                    clip(d, SHORT_DESCRIPTION).into_owned()
                }
            },
            input_schema: p.detailed.then(|| (*t.input_schema).clone()),
            annotations: if p.detailed {
                t.annotations.clone()
            } else {
                None
            },
        })
        .collect();

    let mut note = None;
    if p.detailed
        && serde_json::to_vec(&tools).map(|v| v.len()).unwrap_or(0) as u64
            > engine.limits().inline_bytes / 2
    {
        for t in &mut tools {
            t.input_schema = None;
        }
        note = Some(
            "input schemas left out: with them the list exceeds the answer budget; use list_tool_details for one tool, or filter_by_server / query".into(),
        );
    }
    let held: Vec<&crate::gateway::Held> = held
        .iter()
        .filter(|h| p.filter_by_server.as_deref().is_none_or(|s| s == h.server))
        .collect();
    if !held.is_empty() {
        let names: Vec<String> = held
            .iter()
            .map(|h| format!("{}/{}", h.server, h.tool))
            .collect();
        let line = format!(
            "held until the user reviews a change to their definition in Offload: {}",
            names.join(", ")
        );
        note = Some(match note {
            Some(n) => format!("{n}; {line}"),
            None => line,
        });
    }
    let starting: Vec<&str> = servers
        .iter()
        .filter(|s| s.status == "starting" || s.status == "idle")
        .map(|s| s.name.as_str())
        .collect();
    if !starting.is_empty() {
        let line = format!(
            "still starting, so their tools are not listed yet (ask again in a few seconds): {}",
            starting.join(", ")
        );
        note = Some(match note {
            Some(n) => format!("{n}; {line}"),
            None => line,
        });
    }
    let mut text = render_list(&tools, &servers, p.query.as_deref(), note.as_deref());
    if tools.is_empty() && p.query.is_some() {
        // Nothing matched: every tool name by server, compactly, so the model can pick one.
        let every: Vec<String> = listed
            .iter()
            .filter(|s| !s.tools.is_empty())
            .map(|s| {
                let names: Vec<&str> = s.tools.iter().map(|t| t.name.as_ref()).collect();
                format!("{}: {}", s.status.name, names.join(", "))
            })
            .collect();
        if !every.is_empty() {
            let all = clip(&every.join("\n"), 6000).into_owned();
            text.push_str(&format!("\nNo tool matched; all tools by server:\n{all}"));
            note = Some(format!("no tool matched; all tools by server:\n{all}"));
        }
    }
    answer::structured(
        &AvailableTools {
            tools,
            servers,
            note,
        },
        text,
    )
}

fn render_list(
    tools: &[ListedTool],
    servers: &[ListedServer],
    query: Option<&str>,
    note: Option<&str>,
) -> String {
    let mut out = match query {
        Some(q) => format!("{} tools match \"{q}\"", tools.len()),
        None => format!("{} tools", tools.len()),
    };
    out.push_str(&format!(" on {} servers:\n", servers.len()));
    for t in tools {
        out.push_str(&format!(
            "- {}/{}: {}\n",
            t.server,
            t.tool,
            clip(&first_line(&t.description), 160),
        ));
        if let Some(s) = &t.input_schema {
            out.push_str(&format!(
                "  input: {}\n",
                serde_json::to_string(s).unwrap_or_default()
            ));
        }
    }
    out.push_str("servers: ");
    let s: Vec<String> = servers
        .iter()
        .map(|s| match &s.error {
            Some(e) => format!("{} {} ({})", s.name, s.status, clip(e, 200)),
            None => format!("{} {} ({} tools)", s.name, s.status, s.tool_count),
        })
        .collect();
    out.push_str(&s.join("; "));
    if let Some(n) = note {
        out.push_str(&format!("\nnote: {n}"));
    }
    out
}

fn first_line(s: &str) -> String {
    s.lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim()
        .to_owned()
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ToolDetails {
    pub server: String,
    pub tool: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    pub description: String,
    #[serde(rename = "inputSchema")]
    pub input_schema: JsonObject,
    #[serde(rename = "outputSchema", skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<JsonObject>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub annotations: Option<ToolAnnotations>,
    /// How a script calls it (`run_script`): a TypeScript declaration.
    pub typescript: String,
}

pub async fn list_tool_details(engine: &Engine, p: params::ListToolDetails) -> CallToolResult {
    match find_tool(engine, &p.server, &p.tool_name).await {
        Ok(t) => {
            let details = ToolDetails {
                server: p.server.clone(),
                tool: t.name.to_string(),
                title: t.title.clone(),
                description: t.description.as_deref().unwrap_or("").to_owned(),
                input_schema: (*t.input_schema).clone(),
                output_schema: t.output_schema.as_deref().cloned(),
                annotations: t.annotations.clone(),
                typescript: super::typescript::declaration(&p.server, &t),
            };
            let text = serde_json::to_string(&details).unwrap_or_default();
            answer::structured(&details, text)
        }
        Err(e) => answer::error(&e.into()),
    }
}

/// The definition of `tool` on `server`, or an error naming the closest names.
pub async fn find_tool(engine: &Engine, server: &str, tool: &str) -> Result<Tool, UpstreamError> {
    let upstream = engine.pool.get(server)?;
    let tools = upstream.tools().await?;
    tools
        .iter()
        .find(|t| t.name == tool)
        .cloned()
        .ok_or_else(|| UpstreamError::UnknownTool {
            server: server.to_owned(),
            tool: tool.to_owned(),
            suggestions: closest(tool, tools.iter().map(|t| t.name.as_ref())),
        })
}
