//! `list_available_tools`' ranking: every listed tool indexed with `offload_search` (BM25F over
//! names, titles, descriptions and parameters with each tool's meaning; exact names first; when
//! no tool has a word of the request, the closest in meaning as guesses), the index kept while the
//! servers' tool lists stay the same, so a search among thousands of tools costs a lookup, not
//! an indexing. With the sentence model installed ([`crate::sentences`]) and the catalog's
//! vectors ready within [`MODEL_WAIT`], every tool is ranked by words and the model's meaning.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use offload_search::{Doc, Index};
use rmcp::model::Tool;

use crate::Engine;
use crate::upstream::{Listing, ServerTools};

/// One tool found: its server, its definition, how sure the match is (0–1).
pub type Found<'a> = (&'a str, &'a Tool, f32);

/// The index of the tool lists it was made from. The lists are held, so that comparing them
/// by address is sound: an address cannot be reused while the cache keeps its list alive.
struct Cached {
    lists: Vec<(String, Arc<Vec<Tool>>)>,
    index: Arc<Index>,
}

/// How long a search waits for the sentence model's vectors of the catalog (loading the model
/// and embedding some hundred tools) before it ranks with the built-in meaning.
pub const MODEL_WAIT: Duration = Duration::from_secs(3);

static CACHE: Mutex<Option<Cached>> = Mutex::new(None);

/// The tools of `listed` that match `query` and that `usable` lets through, best first, at most
/// `limit`; and how many matched a word of it in all (0 when those listed are guesses).
pub async fn rank<'a>(
    query: &str,
    listed: &'a [ServerTools],
    usable: impl Fn(&str, &Tool) -> bool,
    limit: usize,
) -> (Vec<Found<'a>>, usize) {
    let catalog: Vec<(&'a str, &'a Tool)> = listed
        .iter()
        .flat_map(|s| s.tools.iter().map(move |t| (s.status.name.as_str(), t)))
        .collect();
    let index = index_of(listed, &catalog).await;
    let request = match crate::sentences::model().await {
        Some(model) if index.has_sentences() => {
            crate::sentences::request_vector(&model, query).await
        }
        _ => None,
    };
    let found: Vec<(Found<'a>, bool)> = index
        .search_with(query, request.as_deref(), usize::MAX)
        .into_iter()
        .filter_map(|hit| {
            let (server, tool) = *catalog.get(hit.doc)?;
            usable(server, tool).then_some(((server, tool, hit.confidence), hit.guess))
        })
        .collect();
    // Guesses (tools close in meaning, none with a word of the request) do not count as matched.
    let matched = found.iter().filter(|(_, guess)| !guess).count();
    (
        found.into_iter().take(limit).map(|(f, _)| f).collect(),
        matched,
    )
}

fn doc<'a>(server: &'a str, tool: &'a Tool, params: &'a str) -> Doc<'a> {
    Doc {
        server,
        name: &tool.name,
        title: tool.title.as_deref(),
        description: tool.description.as_deref().unwrap_or(""),
        params,
    }
}

/// The texts the sentence model is given for a catalog's tools.
fn meaning_texts<'t>(catalog: impl Iterator<Item = (&'t str, &'t Tool)> + Clone) -> Vec<String> {
    let with_server = Index::names_servers(catalog.clone().map(|(server, _)| server));
    catalog
        .map(|(server, tool)| {
            Index::meaning_text(&doc(server, tool, &parameters(tool)), with_server)
        })
        .collect()
}

/// Makes the sentence model's vectors of every listed tool ahead of the first search, and
/// again whenever the servers' tool lists change: for an engine whose sessions find tools by
/// searching (a session shown the meta tools). Once a process; nothing without a model. It
/// holds the engine only while it lists, so it ends with it.
pub fn prepare(engine: &Arc<Engine>) {
    static STARTED: AtomicBool = AtomicBool::new(false);
    if STARTED.swap(true, Ordering::Relaxed) {
        return;
    }
    let engine = Arc::downgrade(engine);
    tokio::spawn(async move {
        let Some(model) = crate::sentences::model().await else {
            return;
        };
        let Some(mut changes) = engine.upgrade().map(|e| e.pool.watch()) else {
            return;
        };
        loop {
            let Some(listing) = engine.upgrade() else {
                return;
            };
            let listed = listing.pool.list_tools(None, Listing::Look).await;
            drop(listing);
            let texts = meaning_texts(
                listed
                    .iter()
                    .flat_map(|s| s.tools.iter().map(|t| (s.status.name.as_str(), t))),
            );
            crate::sentences::tool_vectors(&model, &texts, Duration::ZERO).await;
            if changes.changed().await.is_err() {
                return;
            }
        }
    });
}

/// The index of these lists: the one kept while they are the same, unless it lacks the
/// sentence model's vectors and they are ready now (made within [`MODEL_WAIT`]).
async fn index_of(listed: &[ServerTools], catalog: &[(&str, &Tool)]) -> Arc<Index> {
    let kept = {
        let cache = CACHE.lock().unwrap_or_else(|p| p.into_inner());
        cache
            .as_ref()
            .filter(|cached| {
                cached.lists.len() == listed.len()
                    && cached.lists.iter().zip(listed).all(|((name, tools), s)| {
                        *name == s.status.name && Arc::ptr_eq(tools, &s.tools)
                    })
            })
            .map(|cached| cached.index.clone())
    };
    if let Some(index) = kept.as_ref().filter(|i| i.has_sentences()) {
        return index.clone();
    }
    let vectors = match crate::sentences::model().await {
        Some(model) => {
            let texts = meaning_texts(catalog.iter().copied());
            crate::sentences::tool_vectors(&model, &texts, MODEL_WAIT).await
        }
        None => None,
    };
    match (vectors, kept) {
        (None, Some(index)) => index,
        (vectors, _) => keep(listed, build(catalog, vectors)),
    }
}

fn build(catalog: &[(&str, &Tool)], sentences: Option<Vec<Arc<[f32]>>>) -> Index {
    let params: Vec<String> = catalog.iter().map(|(_, t)| parameters(t)).collect();
    let index = Index::new(
        catalog
            .iter()
            .zip(&params)
            .map(|((server, tool), params)| doc(server, tool, params)),
    );
    match sentences {
        Some(vectors) => index.with_sentences(vectors.iter().map(|v| v.to_vec()).collect()),
        None => index,
    }
}

fn keep(listed: &[ServerTools], index: Index) -> Arc<Index> {
    let index = Arc::new(index);
    *CACHE.lock().unwrap_or_else(|p| p.into_inner()) = Some(Cached {
        lists: listed
            .iter()
            .map(|s| (s.status.name.clone(), s.tools.clone()))
            .collect(),
        index: index.clone(),
    });
    index
}

/// A tool's parameters as text: each name and its description.
fn parameters(tool: &Tool) -> String {
    let Some(serde_json::Value::Object(properties)) = tool.input_schema.get("properties") else {
        return String::new();
    };
    properties
        .iter()
        .map(|(name, schema)| {
            let description = schema
                .get("description")
                .and_then(|d| d.as_str())
                .unwrap_or("");
            format!("{name} {description}")
        })
        .collect::<Vec<_>>()
        .join(" ")
}
