//! The Live log screen's history: the audit log of every Offload process (the app and
//! `offload mcp` in embedded mode), so it survives restarts. New calls arrive through
//! [`crate::activity::Feed`].

use crate::Engine;
use crate::events::Event;

/// The newest `limit` calls, oldest first.
pub fn call_log(engine: &Engine, limit: usize) -> Vec<Event> {
    engine.events.history(limit)
}

/// The newest `limit` calls since `since`, oldest first, as `offload audit` shows them: every
/// replica's from the shared state when `http.state` names a bucket, else this machine's
/// audit log in `data_dir`. Also where they were read.
pub async fn audit_log(
    data_dir: &std::path::Path,
    http: Option<&crate::config::HttpConfig>,
    secrets: &dyn crate::config::SecretSource,
    since: Option<chrono::DateTime<chrono::Utc>>,
    limit: usize,
) -> Result<(Vec<Event>, String), String> {
    match crate::objects::state_bucket(http, secrets) {
        Some(Ok(bucket)) => {
            let events = crate::shared_audit::read(&bucket, since, limit).await?;
            Ok((events, bucket.url.join("audit").to_string()))
        }
        Some(Err(why)) => Err(why),
        None => {
            let local = crate::events::Events::new(Some(data_dir), u64::MAX);
            let events = local
                .history(usize::MAX)
                .into_iter()
                .filter(|e| since.is_none_or(|s| e.time >= s))
                .collect::<Vec<_>>();
            let skip = events.len().saturating_sub(limit);
            Ok((
                events.into_iter().skip(skip).collect(),
                data_dir.join("audit.jsonl").display().to_string(),
            ))
        }
    }
}
