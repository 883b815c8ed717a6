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
use offload_search::meaning::pieces;
use tokio::sync::{Notify, OnceCell};

/// The model file's name beside the program.
pub const FILE_NAME: &str = "offload-search-model.onnx";
/// Past this many kept vectors (1.5 KB each), they are forgotten and made again as asked.
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
pub async fn model() -> Option<Arc<Sentences>> {
    MODEL
        .get_or_init(|| async {
            let path = model_path()?;
            let loaded = tokio::task::spawn_blocking(move || {
                Sentences::load(&path).map_err(|e| e.to_string())
            })
            .await
            .unwrap_or_else(|e| Err(e.to_string()));
            loaded
                .inspect_err(|e| tracing::warn!("the search ranks without its sentence model: {e}"))
                .ok()
                .map(Arc::new)
        })
        .await
        .clone()
}

fn kept<T>(f: impl FnOnce(&mut Kept) -> T) -> T {
    let mut guard = KEPT.lock().unwrap_or_else(|p| p.into_inner());
    f(guard.get_or_insert_with(Kept::default))
}

/// The vectors of a catalog's tool texts, if they are ready within `wait`; the missing ones go
/// on being made in the background.
pub async fn tool_vectors(
    model: &Arc<Sentences>,
    texts: &[String],
    wait: Duration,
) -> Option<Vec<Arc<[f32]>>> {
    let missing: Vec<String> = kept(|k| {
        let mut missing = Vec::new();
        for text in texts {
            if !k.vectors.contains_key(text) && k.pending.insert(text.clone()) {
                missing.push(text.clone());
            }
        }
        missing
    });
    if !missing.is_empty() {
        let model = model.clone();
        tokio::task::spawn_blocking(move || make(&model, missing));
    }
    let deadline = tokio::time::Instant::now() + wait;
    loop {
        let made = MADE.notified();
        let ready: Option<Vec<Arc<[f32]>>> =
            kept(|k| texts.iter().map(|t| k.vectors.get(t).cloned()).collect());
        if ready.is_some() {
            return ready;
        }
        tokio::time::timeout_at(deadline, made).await.ok()?;
    }
}

/// The request's vector, embedded on a blocking thread (some milliseconds).
pub async fn request_vector(model: &Arc<Sentences>, request: &str) -> Option<Vec<f32>> {
    let model = model.clone();
    let pieces = pieces(request);
    tokio::task::spawn_blocking(move || model.embed(&pieces))
        .await
        .ok()?
        .ok()
}

/// Embeds `texts` and keeps each vector.
fn make(model: &Sentences, texts: Vec<String>) {
    let split: Vec<Vec<u32>> = texts.iter().map(|t| pieces(t)).collect();
    let made = model.embed_all(&split);
    kept(|k| {
        if k.vectors.len() + texts.len() > MOST_KEPT {
            k.vectors.clear();
        }
        for (i, text) in texts.iter().enumerate() {
            k.pending.remove(text);
            if let Ok(made) = &made {
                k.vectors.insert(text.clone(), made[i].as_slice().into());
            }
        }
    });
    if let Err(e) = &made {
        tracing::warn!("the sentence model failed on a catalog's tools: {e}");
    }
    MADE.notify_waiters();
}
