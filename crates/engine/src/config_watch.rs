//! Hot reload: watches `config.json` and puts every saved change in effect, whoever made it (a
//! person in an editor, the desktop app, another Offload).
//!
//! The file's directory is watched rather than the file, because editors and Offload itself save
//! by renaming a new file over the old one. Bursts of events are debounced into one reload. A
//! save that does not parse leaves the configuration in effect as it was (see
//! [`Engine::reload`]).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use notify_debouncer_mini::notify::{RecommendedWatcher, RecursiveMode};
use notify_debouncer_mini::{DebounceEventResult, Debouncer, new_debouncer};

use crate::Engine;

/// How long the file must stay quiet before it is read again.
pub const DEBOUNCE: Duration = Duration::from_millis(150);

/// Watches the engine's configuration file until dropped.
pub struct ConfigWatch {
    _debouncer: Debouncer<RecommendedWatcher>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for ConfigWatch {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Starts watching; `None` when the engine has no configuration file. Must be called inside a
/// Tokio runtime.
pub fn watch(engine: Arc<Engine>) -> std::io::Result<Option<ConfigWatch>> {
    let Some(file) = engine.config_path().map(absolute) else {
        return Ok(None);
    };
    let dir = file
        .parent()
        .map(ToOwned::to_owned)
        .unwrap_or_else(|| PathBuf::from("."));
    std::fs::create_dir_all(&dir)?;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let name = file.file_name().map(ToOwned::to_owned);
    let mut debouncer = new_debouncer(DEBOUNCE, move |result: DebounceEventResult| match result {
        Ok(events) if events.iter().any(|e| e.path.file_name() == name.as_deref()) => {
            let _ = tx.send(());
        }
        Ok(_) => {}
        Err(e) => tracing::warn!("watching the configuration: {e}"),
    })
    .map_err(std::io::Error::other)?;
    debouncer
        .watcher()
        .watch(&dir, RecursiveMode::NonRecursive)
        .map_err(std::io::Error::other)?;
    let task = tokio::spawn(async move {
        while rx.recv().await.is_some() {
            while rx.try_recv().is_ok() {}
            match engine.reload().await {
                Ok(reloaded) => {
                    for w in reloaded.warnings {
                        tracing::warn!("{w}");
                    }
                }
                Err(e) => tracing::warn!("{e}"),
            }
        }
    });
    tracing::info!(path = %file.display(), "watching the configuration");
    Ok(Some(ConfigWatch {
        _debouncer: debouncer,
        task,
    }))
}

/// [`watch`] for a long-running process: a watch that cannot start is logged (changes then
/// apply at the next start) rather than stopping anything.
pub fn watch_or_warn(engine: Arc<Engine>) -> Option<ConfigWatch> {
    watch(engine)
        .inspect_err(|e| tracing::warn!("configuration changes apply at the next start: {e}"))
        .ok()
        .flatten()
}

fn absolute(path: &std::path::Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_owned())
}
