//! The Overview's pictures of the activity, from the audit log: calls, errors and bytes kept out
//! of the model's context over the last day (by hour) or week (by day), in total and per server
//! and per client, and the slowest calls of that time.

use chrono::{DateTime, Duration, Local, NaiveTime, Timelike, Utc};
use serde::{Deserialize, Serialize};

use crate::Engine;
use crate::events::{Event, EventKind};

/// The time a picture covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum Span {
    /// The last 24 hours, by hour.
    Day,
    /// The last 7 days (today included), by day.
    Week,
}

/// Servers or clients beyond this many (by calls) are summed as "others".
const GROUPS: usize = 6;
/// How many of the slowest calls are listed.
const SLOWEST: usize = 10;
/// The group of Offload's own tools (no upstream server).
pub const OWN_TOOLS: &str = "Offload";
/// The group of the ones beyond [`GROUPS`].
pub const OTHERS: &str = "others";

/// One line of figures, one value per bucket.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct Series {
    pub name: String,
    #[cfg_attr(feature = "ts", ts(type = "number[]"))]
    pub calls: Vec<u64>,
    #[cfg_attr(feature = "ts", ts(type = "number[]"))]
    pub errors: Vec<u64>,
    #[cfg_attr(feature = "ts", ts(type = "number[]"))]
    pub bytes_kept: Vec<u64>,
}

impl Series {
    fn new(name: &str, buckets: usize) -> Self {
        Self {
            name: name.to_owned(),
            calls: vec![0; buckets],
            errors: vec![0; buckets],
            bytes_kept: vec![0; buckets],
        }
    }

    fn add(&mut self, bucket: usize, event: &Event) {
        let (calls, errors, kept) = counts(event);
        self.calls[bucket] += calls;
        self.errors[bucket] += errors;
        self.bytes_kept[bucket] += kept;
    }

    fn add_series(&mut self, other: &Series) {
        for (mine, theirs) in [
            (&mut self.calls, &other.calls),
            (&mut self.errors, &other.errors),
            (&mut self.bytes_kept, &other.bytes_kept),
        ] {
            for (m, t) in mine.iter_mut().zip(theirs) {
                *m += t;
            }
        }
    }

    fn total_calls(&self) -> u64 {
        self.calls.iter().sum()
    }
}

/// One of the slowest calls.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct SlowCall {
    #[cfg_attr(feature = "ts", ts(type = "string"))]
    pub time: DateTime<Utc>,
    /// The upstream server and tool (`server/tool`), or Offload's own tool.
    pub what: String,
    pub client: String,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub duration_ms: u64,
    pub outcome: String,
}

/// The pictures of one span.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ActivitySeries {
    /// Where each bucket starts, oldest first; the last one holds now.
    #[cfg_attr(feature = "ts", ts(type = "string[]"))]
    pub starts: Vec<DateTime<Utc>>,
    pub total: Series,
    /// The busiest servers first (Offload's own tools as "Offload"), the rest as "others".
    pub by_server: Vec<Series>,
    /// The busiest clients first (by name, without version), the rest as "others".
    pub by_client: Vec<Series>,
    /// The slowest calls of the span, slowest first.
    pub slowest: Vec<SlowCall>,
}

/// Where the buckets of `span` start, oldest first, for a picture taken at `now`: whole hours
/// for a day, local midnights for a week.
pub fn bucket_starts(span: Span, now: DateTime<Utc>) -> Vec<DateTime<Utc>> {
    match span {
        Span::Day => {
            let hour = now
                .with_minute(0)
                .and_then(|t| t.with_second(0))
                .and_then(|t| t.with_nanosecond(0))
                .unwrap_or(now);
            (0..24).rev().map(|h| hour - Duration::hours(h)).collect()
        }
        Span::Week => {
            let today = now.with_timezone(&Local).date_naive();
            (0..7)
                .rev()
                .filter_map(|d| {
                    (today - Duration::days(d))
                        .and_time(NaiveTime::MIN)
                        .and_local_timezone(Local)
                        .earliest()
                        .map(|t| t.with_timezone(&Utc))
                })
                .collect()
        }
    }
}

/// The client's name from its `name/version`.
fn client_name(event: &Event) -> &str {
    match event.client.as_deref() {
        Some(c) => c.rsplit_once('/').map_or(c, |(name, _)| name),
        None => "unknown",
    }
}

/// Series per group, the busiest [`GROUPS`] kept and the rest summed as "others".
fn grouped(mut groups: Vec<Series>, buckets: usize) -> Vec<Series> {
    groups.sort_by(|a, b| {
        b.total_calls()
            .cmp(&a.total_calls())
            .then_with(|| a.name.cmp(&b.name))
    });
    if groups.len() > GROUPS {
        let mut others = Series::new(OTHERS, buckets);
        for g in groups.drain(GROUPS - 1..) {
            others.add_series(&g);
        }
        groups.push(others);
    }
    groups
}

fn series_of<'a>(groups: &'a mut Vec<Series>, name: &str, buckets: usize) -> &'a mut Series {
    match groups.iter().position(|g| g.name == name) {
        Some(i) => &mut groups[i],
        None => {
            groups.push(Series::new(name, buckets));
            groups.last_mut().expect("just pushed")
        }
    }
}

/// The pictures of `events` for `span` as seen at `now`.
pub fn series(events: &[Event], span: Span, now: DateTime<Utc>) -> ActivitySeries {
    let starts = bucket_starts(span, now);
    let buckets = starts.len();
    let mut total = Series::new("all", buckets);
    let mut servers = Vec::new();
    let mut clients = Vec::new();
    let mut slowest: Vec<&Event> = Vec::new();
    for event in events {
        if event.time > now {
            continue;
        }
        let Some(bucket) = starts.partition_point(|s| *s <= event.time).checked_sub(1) else {
            continue;
        };
        total.add(bucket, event);
        let server = event.server.as_deref().unwrap_or(OWN_TOOLS);
        series_of(&mut servers, server, buckets).add(bucket, event);
        series_of(&mut clients, client_name(event), buckets).add(bucket, event);
        if counts(event).0 == 1 {
            slowest.push(event);
        }
    }
    slowest.sort_by_key(|e| std::cmp::Reverse(e.duration_ms));
    slowest.truncate(SLOWEST);
    ActivitySeries {
        starts,
        total,
        by_server: grouped(servers, buckets),
        by_client: grouped(clients, buckets),
        slowest: slowest
            .into_iter()
            .map(|e| SlowCall {
                time: e.time,
                what: match (&e.server, &e.upstream_tool) {
                    (Some(s), Some(t)) => format!("{s}/{t}"),
                    _ => e.tool.clone(),
                },
                client: client_name(e).to_owned(),
                duration_ms: e.duration_ms,
                outcome: e.outcome.clone(),
            })
            .collect(),
    }
}

/// The pictures of the audit log for `span`, now.
pub fn activity(engine: &Engine, span: Span) -> ActivitySeries {
    series(&engine.events.history(usize::MAX), span, Utc::now())
}

/// What an event adds to the figures: (calls, errors, bytes kept out of the model's context).
/// References and batch parts are counted with the call that carried them; the bytes kept were
/// recorded with the event (events of versions before that count for nothing rather than for a
/// wrong figure), and a failed call kept nothing.
pub(super) fn counts(event: &Event) -> (u64, u64, u64) {
    let call = !matches!(event.kind, EventKind::FileRef | EventKind::BatchPart);
    let ok = event.outcome == "ok";
    (
        u64::from(call),
        u64::from(call && !ok),
        if ok { event.bytes_kept } else { 0 },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(minutes_ago: i64, server: Option<&str>, client: &str, kept: u64) -> Event {
        Event {
            time: at(12, 30) - Duration::minutes(minutes_ago),
            client: Some(format!("{client}/1.0")),
            server: server.map(str::to_owned),
            upstream_tool: server.map(|_| "echo".to_owned()),
            bytes_kept: kept,
            duration_ms: 10 + minutes_ago as u64,
            ..crate::events::sample(0)
        }
    }

    fn at(hour: u32, minute: u32) -> DateTime<Utc> {
        "2026-11-24T00:00:00Z".parse::<DateTime<Utc>>().unwrap()
            + Duration::hours(hour.into())
            + Duration::minutes(minute.into())
    }

    #[test]
    fn a_day_is_24_hours_ending_with_the_current_one() {
        let starts = bucket_starts(Span::Day, at(12, 30));
        assert_eq!(starts.len(), 24);
        assert_eq!(starts[23], at(12, 0));
        assert_eq!(starts[0], at(12, 0) - Duration::hours(23));
        let week = bucket_starts(Span::Week, at(12, 30));
        assert_eq!(week.len(), 7);
        assert!(week.windows(2).all(|w| w[0] < w[1]));
        assert!(week[6] <= at(12, 30) && at(12, 30) - week[6] < Duration::hours(24));
    }

    #[test]
    fn calls_errors_and_bytes_kept_land_in_their_hour_per_server_and_client() {
        let mut failed = event(5, Some("git"), "cursor", 999);
        failed.outcome = "upstream_tool_error".into();
        let mut reference = event(6, None, "claude-code", 4_000);
        reference.kind = EventKind::FileRef;
        let events = vec![
            event(10, Some("git"), "claude-code", 1_000_000),
            event(20, Some("git"), "claude-code", 0),
            failed,
            reference,
            event(90, None, "cursor", 500),
            event(60 * 30, Some("git"), "cursor", 7), // older than a day: left out
        ];
        let s = series(&events, Span::Day, at(12, 30));
        assert_eq!(s.total.calls[23], 3, "the reference is not a call");
        assert_eq!(s.total.errors[23], 1);
        assert_eq!(
            s.total.bytes_kept[23], 1_004_000,
            "a failed call keeps nothing"
        );
        assert_eq!(s.total.calls[22], 1);
        assert_eq!(s.total.bytes_kept[22], 500);
        assert_eq!(s.total.calls.iter().sum::<u64>(), 4);
        let names: Vec<_> = s.by_server.iter().map(|g| g.name.as_str()).collect();
        assert_eq!(names, ["git", OWN_TOOLS]);
        assert_eq!(s.by_server[0].calls[23], 3);
        let clients: Vec<_> = s.by_client.iter().map(|g| g.name.as_str()).collect();
        assert_eq!(clients, ["claude-code", "cursor"]);
        assert_eq!(s.by_client[1].errors[23], 1);
        assert_eq!(s.slowest[0].duration_ms, 100);
        assert_eq!(s.slowest[0].what, "call_tool");
        assert_eq!(s.slowest[1].what, "git/echo");
        assert_eq!(s.slowest.len(), 4);
    }

    #[test]
    fn beyond_six_groups_the_quietest_are_summed_as_others() {
        let events: Vec<Event> = (0..9)
            .flat_map(|i| {
                let name = format!("s{i}");
                (0..=i).map(move |_| event(1, Some(&name), "c", 1))
            })
            .collect();
        let s = series(&events, Span::Day, at(12, 30));
        let names: Vec<_> = s.by_server.iter().map(|g| g.name.as_str()).collect();
        assert_eq!(names, ["s8", "s7", "s6", "s5", "s4", OTHERS]);
        assert_eq!(s.by_server[5].calls[23], 4 + 3 + 2 + 1);
        assert_eq!(
            s.by_server.iter().map(|g| g.calls[23]).sum::<u64>(),
            s.total.calls[23]
        );
    }
}
