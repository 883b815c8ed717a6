//! Housekeeping: each root's retention rule (`retention: {days, maxGb}`, off unless the user
//! sets one in Directories) deletes the responses Offload stored there that are older than
//! `days`, then the oldest while they hold more than `maxGb`. Nothing else is ever deleted:
//! not a file Offload did not store, not anything in a read-only root.
//!
//! Every long-running Offload process sweeps shortly after it starts and then every
//! [`SWEEP_EVERY`]; deleting what another process already deleted is harmless.

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::responses::{ResponseView, delete_response, stored};
use crate::Engine;
use crate::config::{Retention, RootEntry, expand_tilde};
use crate::objects::{ObjectUrl, is_object_url};

/// How often the rules are applied.
pub const SWEEP_EVERY: Duration = Duration::from_secs(10 * 60);

/// What a sweep deleted in one root.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Swept {
    pub root: String,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub files: u64,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub bytes: u64,
}

/// Applies every root's rule once. Answers what was deleted, per root (roots where nothing was
/// are left out).
pub fn sweep(engine: &Engine) -> Vec<Swept> {
    sweep_at(engine, Utc::now())
}

/// [`sweep`] as of `now`.
pub fn sweep_at(engine: &Engine, now: DateTime<Utc>) -> Vec<Swept> {
    let rules: Vec<(String, Retention)> = engine
        .config()
        .roots
        .iter()
        .filter(|e| e.writable())
        .filter_map(|e| Some((listed_as(e)?, e.retention()?)))
        .collect();
    if rules.is_empty() {
        return Vec::new();
    }
    let all = stored(engine);
    let mut swept = Vec::new();
    for (root, rule) in rules {
        let mut done = Swept {
            root: root.clone(),
            files: 0,
            bytes: 0,
        };
        for (path, size) in doomed(&all, &root, rule, now) {
            match delete_response(engine, &path) {
                Ok(()) => {
                    done.files += 1;
                    done.bytes += size;
                }
                // Gone already (another process swept it), or cannot be deleted: kept.
                Err(e) => tracing::debug!("retention: {path}: {}", e.message),
            }
        }
        if done.files > 0 {
            tracing::info!(
                root = %done.root,
                files = done.files,
                bytes = done.bytes,
                "retention: deleted stored responses"
            );
            swept.push(done);
        }
    }
    swept
}

/// What `rule` would delete in the root `path` now (asked before the user sets it).
pub fn preview(engine: &Engine, path: &str, rule: Retention) -> Swept {
    let root = listed_as(&RootEntry::Path(path.to_owned())).unwrap_or_else(|| path.to_owned());
    let doomed = doomed(&stored(engine), &root, rule, Utc::now());
    Swept {
        files: doomed.len() as u64,
        bytes: doomed.iter().map(|(_, size)| size).sum(),
        root,
    }
}

/// The stored responses of `root` that `rule` deletes as of `now`, with their sizes (the files
/// beside a response go with it and count with it): those older than its days, then, newest
/// first, each that would take the rest beyond its size.
fn doomed(
    all: &[ResponseView],
    root: &str,
    rule: Retention,
    now: DateTime<Utc>,
) -> Vec<(String, u64)> {
    let mut mine: Vec<&ResponseView> = all
        .iter()
        .filter(|r| r.root == root && r.beside.is_none() && r.deletable)
        .collect();
    mine.sort_by_key(|r| std::cmp::Reverse(r.time));
    let oldest_kept = rule
        .days
        .map(|d| now - chrono::Duration::days(i64::from(d)));
    let budget = rule.max_bytes();
    let mut kept = 0u64;
    let mut out = Vec::new();
    for r in mine {
        let size = r.bytes
            + all
                .iter()
                .filter(|b| b.beside.as_deref() == Some(r.path.as_str()))
                .map(|b| b.bytes)
                .sum::<u64>();
        let too_old = oldest_kept.is_some_and(|t| r.time < t);
        let too_much = budget.is_some_and(|b| kept + size > b);
        if too_old || too_much {
            out.push((r.path.clone(), size));
        } else {
            kept += size;
        }
    }
    out
}

/// The root as the Responses list names it (the canonical directory, or the bucket's URL).
fn listed_as(entry: &RootEntry) -> Option<String> {
    if is_object_url(entry.path()) {
        return ObjectUrl::parse(entry.path()).ok().map(|u| u.to_string());
    }
    std::fs::canonicalize(expand_tilde(entry.path()))
        .ok()
        .map(|p| p.display().to_string())
}

/// Sweeps a moment after the start, then every [`SWEEP_EVERY`], until the engine is dropped.
/// `on_swept` hears of each sweep that deleted something (the app refreshes its screens).
pub fn keep_tidy(
    engine: &Arc<Engine>,
    on_swept: impl Fn(&[Swept]) + Send + 'static,
) -> tokio::task::JoinHandle<()> {
    let engine = Arc::downgrade(engine);
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(5)).await;
        loop {
            let Some(strong) = engine.upgrade() else {
                return;
            };
            let swept = tokio::task::spawn_blocking(move || sweep(&strong))
                .await
                .unwrap_or_default();
            if !swept.is_empty() {
                on_swept(&swept);
            }
            tokio::time::sleep(SWEEP_EVERY).await;
        }
    })
}
