//! The search's sentence model (`offload-embed`), when one is installed: the file
//! `offload-search-model.onnx` beside the running program (the setup puts it there) or in
//! `../share/offload/` from it (the .deb's `/usr/share/offload`, the image's
//! `/usr/local/share/offload`), or the one `OFFLOAD_SEARCH_MODEL` names (empty: none). Without
//! it, the search ranks with the meaning built into `offload-search`.
//!
//! The model is loaded at the first search that wants it, on a blocking thread. Each tool's
//! vector is kept by its text, in the process and on disk ([`disk`]), so a catalog is embedded
//! once, not once a process, and a catalog that changes embeds only its new tools. Nothing
//! waits long on it: a search takes the vectors that are ready within its wait and ranks with
//! the built-in meaning otherwise, while the rest are made in the background, for the next.

mod disk;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use offload_embed::Sentences;
use offload_search::meaning::{pieces, request_pieces};
use tokio::sync::{Notify, OnceCell};

use disk::{Identity, Key};

/// The model file's name beside the program.
pub const FILE_NAME: &str = "offload-search-model.onnx";
/// Past this many kept vectors (1.5 KB each), they are forgotten and made again as asked.
const MOST_KEPT: usize = 50_000;
/// How many tools are embedded before their vectors are kept: a big catalog's first vectors
/// serve searches while the rest are made.
const CHUNK: usize = 64;

/// Where the model is, if there is one to try.
fn model_path() -> Option<PathBuf> {
    match std::env::var_os("OFFLOAD_SEARCH_MODEL") {
        Some(p) if p.is_empty() => None,
        Some(p) => Some(PathBuf::from(p)),
        None => installed_for(&std::env::current_exe().ok()?),
    }
}

/// The model installed with the program at `exe`: beside it, or in `../share/offload/`.
fn installed_for(exe: &Path) -> Option<PathBuf> {
    let dir = exe.parent()?;
    [
        dir.join(FILE_NAME),
        dir.join("../share/offload").join(FILE_NAME),
    ]
    .into_iter()
    .find(|p| p.is_file())
}

#[derive(Default)]
struct Kept {
    vectors: HashMap<Key, Arc<[f32]>>,
    /// Texts being embedded now.
    pending: HashSet<Key>,
}

/// A loaded model and where its vectors are kept on disk, if anywhere.
struct Loaded {
    model: Arc<Sentences>,
    disk: Option<(PathBuf, Identity)>,
}

static MODEL: OnceCell<Option<Loaded>> = OnceCell::const_new();
static KEPT: Mutex<Option<Kept>> = Mutex::new(None);
static MADE: Notify = Notify::const_new();
/// Where the vectors are kept on disk (the engine says: `search-vectors.bin` in the data
/// directory); nowhere until it does.
static DISK: Mutex<Option<PathBuf>> = Mutex::new(None);

/// Keeps the tools' vectors in the file at `path` from now on (read when the model loads).
pub fn remember_in(path: PathBuf) {
    *DISK.lock().unwrap_or_else(|p| p.into_inner()) = Some(path);
}

/// The model, loaded the first time (about half a second) with the vectors kept on disk;
/// `None` when none is installed or it does not load (said once in the log).
pub async fn model() -> Option<Arc<Sentences>> {
    MODEL
        .get_or_init(|| async {
            let path = model_path()?;
            let file = DISK.lock().unwrap_or_else(|p| p.into_inner()).clone();
            let loaded = tokio::task::spawn_blocking(move || load(&path, file))
                .await
                .unwrap_or_else(|e| Err(e.to_string()));
            loaded
                .inspect_err(|e| tracing::warn!("the search ranks without its sentence model: {e}"))
                .ok()
        })
        .await
        .as_ref()
        .map(|l| l.model.clone())
}

/// Loads the model at `path` and the vectors it made that `file` keeps.
fn load(path: &Path, file: Option<PathBuf>) -> Result<Loaded, String> {
    let model = Arc::new(Sentences::load(path).map_err(|e| e.to_string())?);
    let disk = file.zip(disk::identity(path));
    if let Some((file, identity)) = &disk {
        let read = disk::read(file, identity, MOST_KEPT);
        if !read.is_empty() {
            tracing::info!("{} tool vectors read from {}", read.len(), file.display());
        }
        kept(|k| {
            for (key, vector) in read {
                k.vectors.insert(key, vector.into());
            }
        });
    }
    Ok(Loaded { model, disk })
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
    let keys: Vec<Key> = texts.iter().map(|t| disk::key(t)).collect();
    let missing: Vec<(Key, String)> = kept(|k| {
        let mut missing = Vec::new();
        for (key, text) in keys.iter().zip(texts) {
            if !k.vectors.contains_key(key) && k.pending.insert(*key) {
                missing.push((*key, text.clone()));
            }
        }
        missing
    });
    if !missing.is_empty() {
        let model = model.clone();
        let disk = MODEL
            .get()
            .and_then(|l| l.as_ref())
            .and_then(|l| l.disk.clone());
        tokio::task::spawn_blocking(move || make(&model, missing, disk));
    }
    let deadline = tokio::time::Instant::now() + wait;
    loop {
        let made = MADE.notified();
        let ready: Option<Vec<Arc<[f32]>>> =
            kept(|k| keys.iter().map(|key| k.vectors.get(key).cloned()).collect());
        if ready.is_some() {
            return ready;
        }
        tokio::time::timeout_at(deadline, made).await.ok()?;
    }
}

/// The request's vector, embedded on a blocking thread (some milliseconds).
pub async fn request_vector(model: &Arc<Sentences>, request: &str) -> Option<Vec<f32>> {
    let model = model.clone();
    let pieces = request_pieces(request);
    tokio::task::spawn_blocking(move || model.embed(&pieces))
        .await
        .ok()?
        .ok()
}

/// Embeds `texts` a chunk at a time, keeping each chunk's vectors (in the process, and on disk
/// when `disk` says where) before the next.
fn make(model: &Sentences, texts: Vec<(Key, String)>, disk: Option<(PathBuf, Identity)>) {
    for chunk in texts.chunks(CHUNK) {
        let split: Vec<Vec<u32>> = chunk.iter().map(|(_, t)| pieces(t)).collect();
        let made = model.embed_all(&split);
        if let (Ok(made), Some((file, identity))) = (&made, &disk) {
            let records: Vec<(Key, &[f32])> = chunk
                .iter()
                .zip(made)
                .map(|((key, _), v)| (*key, v.as_slice()))
                .collect();
            if let Err(e) = disk::append(file, identity, &records, MOST_KEPT) {
                tracing::warn!(
                    "the tools' vectors could not be kept in {}: {e}",
                    file.display()
                );
            }
        }
        kept(|k| {
            if k.vectors.len() + chunk.len() > MOST_KEPT {
                k.vectors.clear();
            }
            for (i, (key, _)) in chunk.iter().enumerate() {
                k.pending.remove(key);
                if let Ok(made) = &made {
                    k.vectors.insert(*key, made[i].as_slice().into());
                }
            }
        });
        if let Err(e) = &made {
            tracing::warn!("the sentence model failed on a catalog's tools: {e}");
        }
        MADE.notify_waiters();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_model_is_found_beside_the_program_or_in_its_share_folder() {
        let root = tempfile::tempdir().unwrap();
        let bin = root.path().join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        let exe = bin.join("offload");
        assert_eq!(installed_for(&exe), None);
        let shared = root.path().join("share/offload");
        std::fs::create_dir_all(&shared).unwrap();
        std::fs::write(shared.join(FILE_NAME), b"model").unwrap();
        let found = installed_for(&exe).unwrap();
        assert_eq!(found.canonicalize().unwrap(), shared.join(FILE_NAME));
        std::fs::write(bin.join(FILE_NAME), b"model").unwrap();
        assert_eq!(installed_for(&exe), Some(bin.join(FILE_NAME)));
    }
}
