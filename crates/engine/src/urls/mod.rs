//! Reading URLs. An `http(s)://` URL in a file tool's path, in `call_tool_with_file_content`'s
//! files or in a `$file` reference is fetched into the default directory (a stored download
//! with its record: URL, time, content type) and then read as that file, so paging, schemas,
//! queries and batches work on it exactly as on a local file.
//!
//! Deny by default: only URLs matching a `urls.allow` pattern are fetched, each redirect is
//! checked the same way, hosts on private, loopback or link-local addresses only through a
//! pattern that names them, with a size limit and a deadline (`fetch`). A URL fetched in the
//! last five minutes is read from its download again instead of fetched twice (a model paging
//! through it makes several calls).

mod address;
mod allow;
mod fetch;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;
use url::Url;

pub use allow::Pattern;
pub use fetch::shown;

use crate::config::UrlsConfig;
use crate::store::DownloadRequest;
use crate::{Engine, ErrorCode, ToolError};

/// How long a download answers for its URL.
const REUSE: Duration = Duration::from_secs(300);

/// True for what the file tools fetch rather than open: `http://` and `https://` URLs.
pub fn is_url(input: &str) -> bool {
    let head = input
        .trim_start()
        .get(..8)
        .unwrap_or("")
        .to_ascii_lowercase();
    head.starts_with("http://") || head.starts_with("https://")
}

/// The rules in effect (`urls` in the configuration).
#[derive(Debug, Clone)]
pub struct Rules {
    patterns: Vec<Pattern>,
    pub max_bytes: u64,
    pub timeout: Duration,
}

impl Default for Rules {
    fn default() -> Self {
        Self::new(&UrlsConfig::default()).0
    }
}

impl Rules {
    /// The rules of `config`, and a warning for each pattern that does not parse (skipped).
    pub fn new(config: &UrlsConfig) -> (Self, Vec<String>) {
        let mut warnings = Vec::new();
        let patterns = config
            .allow
            .iter()
            .filter_map(|p| {
                Pattern::parse(p)
                    .map_err(|e| warnings.push(format!("urls.allow: {p:?} is skipped: {e}")))
                    .ok()
            })
            .collect();
        let rules = Self {
            patterns,
            max_bytes: config.max_bytes,
            timeout: Duration::from_secs(config.timeout_secs.max(1)),
        };
        (rules, warnings)
    }

    /// The first pattern that allows `url`.
    pub fn allowing(&self, url: &Url) -> Result<&Pattern, ToolError> {
        self.patterns.iter().find(|p| p.matches(url)).ok_or_else(|| {
            let why = if self.patterns.is_empty() {
                "no URL is allowed yet; the user can allow URLs in Offload (Directories → URLs, \
                 or urls.allow in its config)"
                    .to_owned()
            } else {
                format!(
                    "it matches none of the patterns the user allows ({})",
                    self.patterns
                        .iter()
                        .map(Pattern::as_str)
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            };
            fetch::not_allowed(url, &why)
        })
    }
}

/// Downloads of the last minutes, by URL.
#[derive(Default)]
pub struct Downloads {
    recent: Mutex<HashMap<String, (String, std::time::Instant)>>,
}

impl Downloads {
    fn recent(&self, url: &Url) -> Option<String> {
        let mut recent = self.recent.lock().unwrap_or_else(|p| p.into_inner());
        recent.retain(|_, (_, at)| at.elapsed() < REUSE);
        let (path, _) = recent.get(url.as_str())?;
        // A download the user deleted meanwhile is fetched again.
        (crate::objects::is_object_url(path) || std::path::Path::new(path).exists())
            .then(|| path.clone())
    }

    fn remember(&self, url: &Url, path: &str) {
        let mut recent = self.recent.lock().unwrap_or_else(|p| p.into_inner());
        recent.insert(
            url.to_string(),
            (path.to_owned(), std::time::Instant::now()),
        );
    }
}

/// `input` itself when it is not a URL; else the path of its download (fetched now, or in the
/// last minutes).
pub async fn localize(engine: &Arc<Engine>, input: &str) -> Result<String, ToolError> {
    if !is_url(input) {
        return Ok(input.to_owned());
    }
    let url = fetch::parse(input)?;
    let rules = engine.url_rules();
    // Checked before anything else: a URL the user does not allow is never answered from a
    // download either (the rules may have changed since).
    rules.allowing(&url)?;
    if let Some(path) = engine.downloads.recent(&url) {
        return Ok(path);
    }
    let path = download(engine, &rules, &url).await?;
    engine.downloads.remember(&url, &path);
    Ok(path)
}

/// Fetches `url` and streams its body into a new stored download.
async fn download(engine: &Arc<Engine>, rules: &Rules, url: &Url) -> Result<String, ToolError> {
    let started = Instant::now();
    let deadline = started + rules.timeout;
    let mut opened = fetch::open(rules, url, deadline).await?;

    // The body goes from this task to the blocking writer through a small channel (what is
    // in flight is bounded). An empty chunk says the body is whole; a closed channel without
    // it, that it stopped — why is what the pump answers, not the writer's I/O error.
    let (tx, mut rx) = tokio::sync::mpsc::channel::<bytes::Bytes>(16);
    let writer = {
        let engine = engine.clone();
        let (url, final_url) = (url.clone(), opened.final_url.clone());
        let content_type = opened.content_type.clone();
        let roots = engine.roots();
        tokio::task::spawn_blocking(move || {
            let request = DownloadRequest {
                url: &url,
                final_url: &final_url,
                content_type: content_type.as_deref(),
                duration: started.elapsed(),
            };
            engine.store.store_download(&roots, request, |w| {
                while let Some(chunk) = rx.blocking_recv() {
                    if chunk.is_empty() {
                        return Ok(());
                    }
                    w.write_all(&chunk)?;
                }
                Err(std::io::Error::other("the download stopped"))
            })
        })
    };
    let pump = async move {
        let mut total = 0u64;
        loop {
            match tokio::time::timeout_at(deadline, opened.response.chunk()).await {
                Err(_) => return Some(fetch::timed_out(url, rules)),
                Ok(Err(e)) => {
                    return Some(fetch::unreachable(
                        &opened.final_url,
                        &format!("the body broke off: {e}"),
                    ));
                }
                Ok(Ok(None)) => {
                    let _ = tx.send(bytes::Bytes::new()).await;
                    return None;
                }
                Ok(Ok(Some(chunk))) => {
                    total += chunk.len() as u64;
                    if total > rules.max_bytes {
                        return Some(fetch::too_large(url, rules.max_bytes));
                    }
                    // An empty chunk would read as the end; a failed send means the writer
                    // failed, and its error says why.
                    if !chunk.is_empty() && tx.send(chunk).await.is_err() {
                        return None;
                    }
                }
            }
        }
    };
    let (stopped, written) = tokio::join!(pump, writer);
    if let Some(e) = stopped {
        return Err(e);
    }
    let written =
        written.map_err(|e| ToolError::new(ErrorCode::Internal, format!("the download: {e}")))?;
    let record = written?;
    tracing::info!(
        url = %shown(url),
        path = %record.path,
        bytes = record.bytes,
        "fetched a URL into a stored download"
    );
    Ok(record.path)
}
