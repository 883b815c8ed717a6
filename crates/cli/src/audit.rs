//! `offload audit`: the calls served, as JSON lines (oldest first) — every replica's when the
//! configuration names `http.state` (the shared audit log), else this machine's.

use std::process::ExitCode;

use chrono::{DateTime, Duration, Utc};
use clap::Args;
use offload_engine::keychain::Keychain;

use crate::mcp::ConfigChoice;

#[derive(Debug, Args)]
pub struct AuditArgs {
    /// Only calls since then: RFC 3339 (2026-11-26T09:00:00Z) or a span back from now (30m,
    /// 2h, 7d).
    #[arg(long, value_name = "WHEN")]
    since: Option<String>,
    /// At most this many, the newest.
    #[arg(long, default_value_t = 1000)]
    limit: usize,
}

/// `30m`, `2h`, `7d`, `45s` back from `now`, or an RFC 3339 time.
fn since(text: &str, now: DateTime<Utc>) -> Result<DateTime<Utc>, String> {
    if let Ok(t) = DateTime::parse_from_rfc3339(text) {
        return Ok(t.with_timezone(&Utc));
    }
    let neither = || format!("'{text}' is neither RFC 3339 nor a span like 30m, 2h, 7d");
    let unit = text.chars().last().ok_or_else(neither)?;
    let n: i64 = text[..text.len() - unit.len_utf8()]
        .parse()
        .map_err(|_| neither())?;
    let span = match unit {
        's' => Duration::seconds(n),
        'm' => Duration::minutes(n),
        'h' => Duration::hours(n),
        'd' => Duration::days(n),
        _ => return Err(format!("'{text}': the span's unit is s, m, h or d")),
    };
    Ok(now - span)
}

pub fn run(config: ConfigChoice, args: AuditArgs) -> ExitCode {
    let since = match args
        .since
        .as_deref()
        .map(|s| since(s, Utc::now()))
        .transpose()
    {
        Ok(s) => s,
        Err(e) => {
            eprintln!("offload: {e}");
            return ExitCode::FAILURE;
        }
    };
    crate::mcp::with_config(config, |dirs, config| async move {
        let read = offload_engine::control::audit_log(
            &dirs.data_dir,
            config.http.as_ref(),
            &Keychain::platform(),
            since,
            args.limit,
        )
        .await;
        match read {
            Ok((events, place)) => {
                eprintln!("{} call(s) from {place}", events.len());
                let mut out = std::io::stdout().lock();
                for e in events {
                    if serde_json::to_writer(&mut out, &e).is_err()
                        || std::io::Write::write_all(&mut out, b"\n").is_err()
                    {
                        return ExitCode::FAILURE;
                    }
                }
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("offload: {e}");
                ExitCode::FAILURE
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn since_reads_times_and_spans_back() {
        let now = DateTime::parse_from_rfc3339("2026-11-26T12:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        assert_eq!(since("30m", now).unwrap(), now - Duration::minutes(30));
        assert_eq!(since("7d", now).unwrap(), now - Duration::days(7));
        assert_eq!(
            since("2026-11-26T09:00:00+01:00", now)
                .unwrap()
                .to_rfc3339(),
            "2026-11-26T08:00:00+00:00"
        );
        for bad in ["", "m", "10y", "yesterday", "-", "é", "3é"] {
            assert!(since(bad, now).is_err(), "{bad}");
        }
    }
}
