//! The audit log of replicas on several machines, in the shared state (`http.state`): each
//! replica still appends every event to the `audit.jsonl` on its own disk, and sends them on,
//! a segment at a time, to `audit/<day>/<time>-<replica>-<n>.jsonl` under the state bucket's
//! prefix — new objects only (nothing is ever replaced, so replicas never contend), written
//! within [`EVERY`] of the events. `offload audit` reads every replica's events from there,
//! merged in time order.
//!
//! A bucket that is down keeps the events waiting (up to [`WAITING`], the oldest dropped past
//! that, and the log says how many); each is sent once it answers again. A replica killed
//! loses at most the last second's events from the shared log (its own disk has them).

use std::time::Duration;

use chrono::{DateTime, NaiveDate, Utc};
use futures::TryStreamExt;
use object_store::{ObjectStore, PutMode, PutOptions, PutPayload};
use tokio::sync::mpsc;

use crate::events::{Event, Events};
use crate::objects::Bucket;

/// Events are sent at least this often (when there are any).
pub const EVERY: Duration = Duration::from_secs(1);
/// How many events may wait for a bucket that does not answer.
const WAITING: usize = 100_000;
/// One segment holds at most this many events.
const SEGMENT: usize = 10_000;

/// Sends `events` to the state bucket from now on, on a task of its own. Must run inside a
/// runtime.
pub fn ship(events: &Events, bucket: Bucket) {
    let (tx, rx) = mpsc::channel(WAITING);
    if !events.tee(tx) {
        return;
    }
    let mut replica = [0u8; 4];
    let _ = getrandom::fill(&mut replica);
    tokio::spawn(run(bucket, hex::encode(replica), rx));
}

async fn run(bucket: Bucket, replica: String, mut rx: mpsc::Receiver<Event>) {
    let mut waiting: Vec<Event> = Vec::new();
    let mut n = 0u64;
    let mut failing = false;
    loop {
        if waiting.is_empty() && rx.recv_many(&mut waiting, SEGMENT).await == 0 {
            return;
        }
        // The rest of this second's events.
        let deadline = tokio::time::Instant::now() + EVERY;
        while waiting.len() < WAITING {
            match tokio::time::timeout_at(deadline, rx.recv()).await {
                Ok(Some(event)) => waiting.push(event),
                Ok(None) | Err(_) => break,
            }
        }
        while !waiting.is_empty() {
            let take = waiting.len().min(SEGMENT);
            n += 1;
            match put_segment(&bucket, &replica, n, &waiting[..take]).await {
                Ok(()) => {
                    waiting.drain(..take);
                    if failing {
                        tracing::info!("the shared audit log is written again");
                        failing = false;
                    }
                }
                Err(e) => {
                    if !failing {
                        tracing::warn!("the shared audit log cannot be written now: {e}");
                        failing = true;
                    }
                    if waiting.len() > WAITING {
                        let over = waiting.len() - WAITING;
                        waiting.drain(..over);
                        tracing::warn!("{over} audit event(s) dropped from the shared log");
                    }
                    tokio::time::sleep(EVERY).await;
                    break;
                }
            }
        }
    }
}

/// Writes one segment as a new object.
async fn put_segment(
    bucket: &Bucket,
    replica: &str,
    n: u64,
    events: &[Event],
) -> Result<(), String> {
    let first = events.first().map(|e| e.time).unwrap_or_else(Utc::now);
    let day = first.format("%Y-%m-%d").to_string();
    let name = format!("{}-{replica}-{n:06}.jsonl", first.format("%H%M%S%.3f"));
    let mut body = Vec::with_capacity(events.len() * 256);
    for e in events {
        serde_json::to_writer(&mut body, e).map_err(|e| e.to_string())?;
        body.push(b'\n');
    }
    let options = PutOptions {
        mode: PutMode::Create,
        ..Default::default()
    };
    let key = bucket.url.join("audit").join(&day).join(&name).key();
    let put = bucket.store.put_opts(&key, PutPayload::from(body), options);
    match tokio::time::timeout(Duration::from_secs(10), put).await {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err("no answer within 10 s".into()),
    }
}

/// Every replica's events from `since` (a day's start when only that is known), in time order,
/// at most `limit` of the newest.
pub async fn read(
    bucket: &Bucket,
    since: Option<DateTime<Utc>>,
    limit: usize,
) -> Result<Vec<Event>, String> {
    let prefix = bucket.url.join("audit").key();
    let first_day: Option<NaiveDate> = since.map(|s| s.date_naive());
    let listed: Vec<object_store::ObjectMeta> = bucket
        .store
        .list(Some(&prefix))
        .try_collect()
        .await
        .map_err(|e| format!("cannot list {}: {e}", bucket.url.join("audit")))?;
    let mut events = Vec::new();
    for meta in listed {
        // `audit/<day>/<segment>`: days before `since` are not read.
        let day = meta
            .location
            .parts()
            .rev()
            .nth(1)
            .and_then(|d| NaiveDate::parse_from_str(d.as_ref(), "%Y-%m-%d").ok());
        if first_day.is_some_and(|first| day.is_some_and(|d| d < first)) {
            continue;
        }
        let failed = |e: object_store::Error| format!("cannot read {}: {e}", meta.location);
        let got = bucket
            .store
            .get_opts(&meta.location, Default::default())
            .await
            .map_err(failed)?;
        let bytes = got.bytes().await.map_err(failed)?;
        for line in bytes.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
            match serde_json::from_slice::<Event>(line) {
                Ok(e) if since.is_none_or(|s| e.time >= s) => events.push(e),
                Ok(_) => {}
                Err(e) => tracing::warn!("{}: a line that is not an event ({e})", meta.location),
            }
        }
    }
    events.sort_by_key(|e| e.time);
    let skip = events.len().saturating_sub(limit);
    Ok(events.split_off(skip))
}
