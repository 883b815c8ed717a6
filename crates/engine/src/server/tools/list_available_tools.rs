//! `list_available_tools`: upstream tools found by what a model needs, and each server's status.

use rmcp::model::{Tool, ToolAnnotations};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::prelude::*;
use crate::ToolError;
use crate::server::{answer, clip, search};
use crate::upstream::ServerStatus;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// With input schemas.
    #[serde(default)]
    pub detailed: bool,
    /// One server's tools only.
    #[serde(default)]
    pub filter_by_server: Option<String>,
    /// What you need, in words.
    #[serde(default)]
    pub query: Option<String>,
    /// Results (5, at most 20).
    #[serde(default)]
    pub limit: Option<usize>,
}

pub struct ListAvailableTools;

impl OwnTool for ListAvailableTools {
    type Params = Params;
    const NAME: &'static str = "list_available_tools";
    const TITLE: &'static str = "Find upstream tools";
    const DESCRIPTION: &'static str = "Find upstream tools by what you need (query: \"git history\") and see each \
         server's status; then call one with call_tool.";
    const HINTS: Hints = Hints::AsksUpstreams;
    const OUTPUT: Option<Output> = Some(Output::of::<AvailableTools>("tools servers note"));

    async fn call(engine: &Arc<Engine>, p: Self::Params, _: &Ctx) -> CallToolResult {
        list_available_tools(engine, p).await
    }
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct AvailableTools {
    /// With a query: how many tools matched (the best `limit` are listed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matched: Option<usize>,
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
    /// How sure the match is, 0 to 1 (1: the tool's exact name); with a query only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub confidence: Option<f64>,
    #[serde(rename = "inputSchema", skip_serializing_if = "Option::is_none")]
    pub input_schema: Option<JsonObject>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub annotations: Option<ToolAnnotations>,
}

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

/// Tools a search answers by default, and at most (`limit`).
const RESULTS: usize = 5;
const MOST_RESULTS: usize = 20;
/// A search result's description is cut to this many bytes: enough to tell tools apart.
const RESULT_DESCRIPTION: usize = 80;
/// What a search's answer may take a result, all told (1,500 bytes for the default five).
const RESULT_BYTES: usize = 300;
/// The bytes of a tool result around its text (as a JSON string) and structured content:
/// `{"content":[{"type":"text","text":…}],"structuredContent":…,"isError":false}`.
const ENVELOPE: usize = 75;

async fn list_available_tools(engine: &Engine, p: Params) -> CallToolResult {
    if let Some(name) = &p.filter_by_server
        && let Err(e) = engine.pool.get(name)
    {
        return answer::error(&ToolError::from(e));
    }
    let limit = p.limit.unwrap_or(RESULTS);
    if !(1..=MOST_RESULTS).contains(&limit) {
        return answer::error(&ToolError::new(
            crate::ErrorCode::InvalidArguments,
            format!("limit must be between 1 and {MOST_RESULTS}"),
        ));
    }
    let listing = crate::upstream::Listing::Look;
    let listed = engine
        .pool
        .list_tools(p.filter_by_server.as_deref(), listing)
        .await;
    let servers: Vec<ListedServer> = listed
        .iter()
        .map(|s| {
            let mut l = ListedServer::from(&s.status);
            l.tool_count = s.tools.len();
            l
        })
        .collect();
    // Tools the user turned off or that are held for review are not offered.
    let (usable, held) = crate::available::usable(engine, listing).await;
    let usable_names: std::collections::HashSet<(&str, &str)> = usable
        .iter()
        .flat_map(|(s, tools)| tools.iter().map(move |t| (s.as_str(), t.name.as_ref())))
        .collect();
    let usable = |server: &str, t: &Tool| usable_names.contains(&(server, t.name.as_ref()));
    let query = p.query.as_deref().filter(|q| !q.trim().is_empty());
    // Each tool with its confidence (a search's), and how many matched.
    type Listing<'a> = Vec<(&'a str, &'a Tool, Option<f32>)>;
    let (found, matched): (Listing, usize) = match query {
        Some(q) => {
            let (found, matched) = search::rank(q, &listed, usable, limit).await;
            let found = found.into_iter().map(|(s, t, c)| (s, t, Some(c))).collect();
            (found, matched)
        }
        None => {
            let all: Vec<_> = listed
                .iter()
                .flat_map(|s| {
                    s.tools
                        .iter()
                        .map(move |t| (s.status.name.as_str(), t, None))
                })
                .filter(|(server, t, _)| usable(server, t))
                .collect();
            let n = all.len();
            (all, n)
        }
    };
    let mut tools: Vec<ListedTool> = found
        .into_iter()
        .map(|(server, t, confidence)| ListedTool {
            server: server.to_owned(),
            tool: t.name.to_string(),
            description: {
                let d = t.description.as_deref().unwrap_or("");
                if p.detailed {
                    d.to_owned()
                } else if confidence.is_some() {
                    clip_words(&first_line(d), RESULT_DESCRIPTION)
                } else {
                    clip(d, SHORT_DESCRIPTION).into_owned()
                }
            },
            confidence: confidence.map(|c| (f64::from(c) * 100.0).round() / 100.0),
            input_schema: p.detailed.then(|| (*t.input_schema).clone()),
            annotations: if p.detailed {
                t.annotations.clone()
            } else {
                None
            },
        })
        .collect();

    let mut notes: Vec<String> = Vec::new();
    if p.detailed
        && serde_json::to_vec(&tools).map(|v| v.len()).unwrap_or(0) as u64
            > engine.limits().inline_bytes / 2
    {
        for t in &mut tools {
            t.input_schema = None;
        }
        notes.push("input schemas left out: with them the list exceeds the answer budget; use list_tool_details for one tool, or filter_by_server / query".into());
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
        notes.push(format!(
            "held until the user reviews a change to their definition in Offload: {}",
            names.join(", ")
        ));
    }
    let starting: Vec<&str> = servers
        .iter()
        .filter(|s| (s.status == "starting" || s.status == "idle") && s.tool_count == 0)
        .map(|s| s.name.as_str())
        .collect();
    if !starting.is_empty() {
        notes.push(format!(
            "still starting, so their tools are not listed yet (ask again in a few seconds): {}",
            starting.join(", ")
        ));
    }
    if matched == 0 && query.is_some() {
        // No tool has a word of the request: those listed (if any) are only close in meaning;
        // the servers and how many tools each has, to search again or browse one.
        let every: Vec<String> = servers
            .iter()
            .filter(|s| s.tool_count > 0)
            .map(|s| format!("{} ({} tools)", s.name, s.tool_count))
            .collect();
        if !every.is_empty() {
            notes.push(format!(
                "{}; servers: {}; search in other words, or list one server's tools with filter_by_server",
                if tools.is_empty() {
                    "no tool matched"
                } else {
                    "no tool has these words; those listed are only close in meaning"
                },
                every.join(", ")
            ));
        }
    }
    // A search's answer names only the servers that are not ready: the tools are the answer.
    let servers: Vec<ListedServer> = match query {
        Some(_) => servers
            .into_iter()
            .filter(|s| s.status != "ready")
            .collect(),
        None => servers,
    };
    let note = (!notes.is_empty()).then(|| notes.join("; "));
    let mut out = AvailableTools {
        matched: query.map(|_| matched),
        tools,
        servers,
        note,
    };
    let mut text = render_list(&out.tools, &out.servers, out.matched, out.note.as_deref());
    if query.is_some() && !p.detailed {
        // A search's answer stays within its budget: descriptions are cut shorter until it does.
        let firsts: Vec<String> = out.tools.iter().map(|t| t.description.clone()).collect();
        let budget = RESULT_BYTES * limit;
        for cut in [RESULT_DESCRIPTION, 64, 48, 32, 16, 0] {
            let size = serde_json::to_vec(&text).map_or(0, |v| v.len())
                + serde_json::to_vec(&out).map_or(0, |v| v.len());
            if size + ENVELOPE <= budget {
                break;
            }
            for (t, first) in out.tools.iter_mut().zip(&firsts) {
                t.description = clip_words(first, cut);
            }
            text = render_list(&out.tools, &out.servers, out.matched, out.note.as_deref());
        }
    }
    answer::structured(&out, text)
}

fn render_list(
    tools: &[ListedTool],
    servers: &[ListedServer],
    matched: Option<usize>,
    note: Option<&str>,
) -> String {
    let mut out = match matched {
        Some(n) if n > tools.len() => format!(
            "the {} best of {n} matching tools (limit shows up to {MOST_RESULTS}):\n",
            tools.len()
        ),
        Some(n) => format!("{n} matching tools:\n"),
        None => format!("{} tools on {} servers:\n", tools.len(), servers.len()),
    };
    for t in tools {
        let confidence = t
            .confidence
            .map(|c| format!(" ({c:.2})"))
            .unwrap_or_default();
        let description = clip(&first_line(&t.description), 160).into_owned();
        let said = if description.is_empty() {
            String::new()
        } else {
            format!(": {description}")
        };
        out.push_str(&format!("- {}/{}{confidence}{said}\n", t.server, t.tool));
        if let Some(s) = &t.input_schema {
            out.push_str(&format!(
                "  input: {}\n",
                serde_json::to_string(s).unwrap_or_default()
            ));
        }
    }
    if !servers.is_empty() {
        out.push_str("servers: ");
        let s: Vec<String> = servers
            .iter()
            .map(|s| match &s.error {
                Some(e) => format!("{} {} ({})", s.name, s.status, clip(e, 200)),
                None => format!("{} {} ({} tools)", s.name, s.status, s.tool_count),
            })
            .collect();
        out.push_str(&s.join("; "));
    }
    if let Some(n) = note {
        out.push_str(&format!("\nnote: {n}"));
    }
    out.trim_end().to_owned()
}

/// `s` cut to at most `max` bytes at a word's end, with an ellipsis when cut.
fn clip_words(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_owned();
    }
    if max < 8 {
        return String::new();
    }
    let cut = clip(s, max.saturating_sub(2));
    let cut = cut.trim_end_matches("...");
    let end = cut
        .rfind(' ')
        .filter(|at| *at > cut.len() / 2)
        .unwrap_or(cut.len());
    format!("{}…", cut[..end].trim_end_matches([',', ';', ':', ' ']))
}

fn first_line(s: &str) -> String {
    s.lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim()
        .to_owned()
}
