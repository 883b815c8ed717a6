//! The search's sentence model (`offload-embed`), when one is installed: the file
//! `offload-search-model.onnx` beside the running program (the setup puts it there), or the one
//! `OFFLOAD_SEARCH_MODEL` names (empty: none). Without it, the search ranks with the meaning
//! built into `offload-search`.
//!
//! The model is loaded at the first search that wants it, on a blocking thread. Each tool's
//! vector is kept by its text, so a catalog that changes embeds only its new tools. Nothing
//! waits long on it: a search takes the vectors that are ready within its wait and ranks with
//! the built-in meaning otherwise, while the rest are made in the background, for the next.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use offload_embed::Sentences;
use tokio::sync::{Notify, OnceCell};

/// The model file's name beside the program.
pub const FILE_NAME: &str = "offload-search-model.onnx";
/// Texts embedded in one pass.
const BATCH: usize = 16;
/// Past this many kept vectors (1.5 KB each), the oldest catalog's are forgotten.
const MOST_KEPT: usize = 50_000;

/// Where the model is, if there is one to try.
fn model_path() -> Option<PathBuf> {
    match std::env::var_os("OFFLOAD_SEARCH_MODEL") {
        Some(p) if p.is_empty() => None,
        Some(p) => Some(PathBuf::from(p)),
        None => {
            let beside = std::env::current_exe().ok()?.with_file_name(FILE_NAME);
            beside.is_file().then_some(beside)
        }
    }
}

#[derive(Default)]
struct Kept {
    vectors: HashMap<String, Arc<[f32]>>,
    /// Texts being embedded now.
    pending: HashSet<String>,
}

static MODEL: OnceCell<Option<Arc<Sentences>>> = OnceCell::const_new();
static KEPT: Mutex<Option<Kept>> = Mutex::new(None);
static MADE: Notify = Notify::const_new();

/// The model, loaded the first time (about half a second); `None` when none is installed or it
/// does not load (said once in the log).
async fn model() -> Option<Arc<Sentences>> {
    MODEL
        .get_or_init(|| async {
            let path = model_path()?;
            let loaded = tokio::task::spawn_blocking(move || Sentences::load(&path)).await;
            match loaded {
                Ok(Ok(model)) => Some(Arc::new(model)),
                Ok(Err(e)) => {
                    tracing::warn!("the search ranks without its sentence model: {e}");
                    None
                }
                Err(e) => {
                    tracing::warn!("the search ranks without its sentence model: {e}");
                    None
                }
            }
        })
        .await
        .clone()
}

fn kept<T>(f: impl FnOnce(&mut Kept) -> T) -> T {
    let mut guard = KEPT.lock().unwrap_or_else(|p| p.into_inner());
    f(guard.get_or_insert_with(Kept::default))
}

/// The vectors of a catalog's tool texts and of the request, if the model is installed and
/// they are ready within `wait`; the missing ones go on being made in the background.
pub async fn vectors(
    texts: &[String],
    request: &str,
    wait: Duration,
) -> Option<(Vec<Arc<[f32]>>, Vec<f32>)> {
    let model = model().await?;
    let missing: Vec<String> = kept(|k| {
        let missing: Vec<String> = texts
            .iter()
            .filter(|t| !k.vectors.contains_key(*t) && !k.pending.contains(*t))
            .cloned()
            .collect::<HashSet<_>>()
            .into_iter()
            .collect();
        k.pending.extend(missing.iter().cloned());
        missing
    });
    if !missing.is_empty() {
        let model = model.clone();
        tokio::task::spawn_blocking(move || make(&model, missing));
    }
    let ready = || kept(|k| texts.iter().map(|t| k.vectors.get(t).cloned()).collect());
    let deadline = tokio::time::Instant::now() + wait;
    let tools: Vec<Arc<[f32]>> = loop {
        let made = MADE.notified();
        let found: Option<Vec<Arc<[f32]>>> = ready();
        if let Some(found) = found {
            break found;
        }
        if tokio::time::timeout_at(deadline, made).await.is_err() {
            return None;
        }
    };
    let pieces = offload_search::meaning::pieces(request);
    let asked = tokio::task::spawn_blocking(move || model.embed(&pieces)).await;
    match asked {
        Ok(Ok(v)) => Some((tools, v)),
        _ => None,
    }
}

/// Embeds `texts` in passes of about equal length, keeping each vector as it is made.
fn make(model: &Sentences, mut texts: Vec<String>) {
    let pieces = |t: &String| offload_search::meaning::pieces(t);
    texts.sort_by_cached_key(|t| pieces(t).len());
    for chunk in texts.chunks(BATCH) {
        let split: Vec<Vec<u32>> = chunk.iter().map(pieces).collect();
        let batch: Vec<&[u32]> = split.iter().map(Vec::as_slice).collect();
        let made = model.embed_many(&batch);
        kept(|k| {
            if k.vectors.len() + chunk.len() > MOST_KEPT {
                k.vectors.clear();
            }
            for (i, text) in chunk.iter().enumerate() {
                k.pending.remove(text);
                if let Ok(made) = &made {
                    k.vectors.insert(text.clone(), made[i].as_slice().into());
                }
            }
        });
        if let Err(e) = &made {
            tracing::warn!("the sentence model failed on a tool: {e}");
        }
        MADE.notify_waiters();
    }
}
