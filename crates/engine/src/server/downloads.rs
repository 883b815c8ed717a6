//! URLs in a file tool's path, in `call_tool_with_file_content`'s files or in a `$file`
//! reference: fetched under the rules in force (`urls`) into a stored download (`store`), then
//! read as that file; a URL fetched in the last minutes is read from its download again.

use std::sync::Arc;

use tokio::time::Instant;
use url::Url;

use crate::store::DownloadRequest;
use crate::urls::{Rules, fetch, is_url, shown};
use crate::{Engine, ErrorCode, ToolError};

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
