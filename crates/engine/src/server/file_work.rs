//! A file tool's work: the path goes through the roots guard (a URL is fetched into a stored
//! download first), the work runs on a blocking thread (the file tools are synchronous and
//! streaming), progress is forwarded when the client asked for it, and a cancelled request stops
//! the scan.

use std::path::Path;
use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::model::ProgressNotificationParam;
use rmcp::service::RequestContext;
use tokio_util::sync::CancellationToken;

use crate::{Engine, ToolError};
use offload_formats::files::{FileError, Inspector, Observer, Source};

/// What the blocking work sees: progress goes to the client, cancellation comes from it.
struct Watch {
    cancel: CancellationToken,
    progress: Option<tokio::sync::mpsc::UnboundedSender<(u64, u64)>>,
    /// The last progress reported, `(done, total)`, for the log of a cancelled scan.
    reached: std::sync::Mutex<(u64, u64)>,
}

impl Observer for Watch {
    fn progress(&self, done: u64, total: u64) {
        if let Ok(mut reached) = self.reached.lock() {
            *reached = (done, total);
        }
        if let Some(tx) = &self.progress {
            let _ = tx.send((done, total));
        }
    }
    fn cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }
}

/// Resolves `path` inside the roots (or fetches it, for an allowed URL), opens it through the
/// guard and runs `work` on it.
pub(in crate::server) async fn run<T: Send + 'static>(
    engine: &Arc<Engine>,
    path: String,
    ctx: &RequestContext<RoleServer>,
    work: impl FnOnce(&Inspector, Source, &Path, &dyn Observer) -> Result<T, FileError> + Send + 'static,
) -> Result<T, ToolError> {
    let token = ctx.meta.get_progress_token();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let watch = Watch {
        cancel: ctx.ct.clone(),
        progress: token.is_some().then_some(tx),
        reached: std::sync::Mutex::default(),
    };
    // A URL is fetched into a stored download first, then read as that file.
    let path = super::downloads::localize(engine, &path).await?;
    let engine = engine.clone();
    let job = tokio::task::spawn_blocking(move || {
        let (source, shown) = engine.roots().open(&path)?;
        let result = work(&engine.files, source, &shown, &watch);
        if let Err(FileError::Cancelled) = &result {
            // The client gave up and hears nothing more of this request; the log says where
            // the scan stopped.
            let (done, total) = watch.reached.lock().map(|r| *r).unwrap_or_default();
            tracing::info!(path, done, total, "cancelled: the scan stopped");
        }
        result.map_err(|e| ToolError::from(e).with("path", path))
    });
    let peer = ctx.peer.clone();
    let forward = async move {
        while let Some((done, total)) = rx.recv().await {
            if let Some(token) = &token {
                let mut p = ProgressNotificationParam::new(token.clone(), done as f64);
                p.total = Some(total as f64);
                let _ = peer.notify_progress(p).await;
            }
        }
    };
    let (result, ()) = tokio::join!(job, forward);
    result.map_err(|e| ToolError::new(crate::ErrorCode::Internal, e.to_string()))?
}
