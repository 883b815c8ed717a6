//! Long scans of every kind report progress and stop when the observer cancels.

use super::*;

/// Records progress; says "cancelled" once it has seen `cancel_after` reports.
#[derive(Default)]
struct Recording {
    reports: std::sync::Mutex<Vec<(u64, u64)>>,
    cancel_after: Option<usize>,
}

impl Observer for Recording {
    fn progress(&self, done: u64, total: u64) {
        self.reports.lock().unwrap().push((done, total));
    }
    fn cancelled(&self) -> bool {
        self.cancel_after
            .is_some_and(|n| self.reports.lock().unwrap().len() >= n)
    }
}

/// Files of about 17 MiB (two progress steps) of each kind whose scan is long: (name, content).
fn long_scans() -> Vec<(&'static str, Vec<u8>)> {
    let target = 17 << 20;
    let fill = |head: &str, row: &dyn Fn(usize) -> String, sep: &str, tail: &str| {
        let mut s = String::from(head);
        let mut i = 0;
        while s.len() < target {
            if i > 0 {
                s.push_str(sep);
            }
            s.push_str(&row(i));
            i += 1;
        }
        s.push_str(tail);
        s.into_bytes()
    };
    vec![
        (
            "rows.csv",
            fill("id,name\n", &|i| format!("{i},\"n{i}\"\n"), "", ""),
        ),
        (
            "items.json",
            fill(
                "[",
                &|i| format!("{{\"id\":{i},\"tags\":[\"a\"]}}"),
                ",",
                "]",
            ),
        ),
        (
            "events.jsonl",
            fill("", &|i| format!("{{\"n\":{i}}}\n"), "", ""),
        ),
        (
            "feed.xml",
            fill("<feed>", &|i| format!("<item id=\"{i}\"/>"), "", "</feed>"),
        ),
        (
            "log.txt",
            fill("", &|i| format!("line {i} of the log\n"), "", ""),
        ),
    ]
}

#[test]
fn long_scans_report_progress_and_stop_when_cancelled() {
    let dir = tempfile::tempdir().unwrap();
    // Fresh inspectors (no cached line index); the CSV both ways: counted with sampled types,
    // and parsed whole.
    let sampled = Settings::default();
    let whole = Settings {
        full_scan_limit: u64::MAX,
        ..Settings::default()
    };
    for (name, bytes) in long_scans() {
        let path = write(dir.path(), name, &bytes);
        let ways = if name.ends_with(".csv") { 2 } else { 1 };
        for settings in [&sampled, &whole].into_iter().take(ways) {
            let schema = |observer: &Recording| {
                Inspector::new(settings.clone())
                    .schema(open(&path), &path, 3, observer)
                    .map(|_| ())
            };
            let seen = Recording::default();
            schema(&seen).unwrap_or_else(|e| panic!("{name}: {e}"));
            let reports = seen.reports.into_inner().unwrap();
            assert!(reports.len() >= 2, "{name}: {reports:?}");
            assert!(
                reports
                    .windows(2)
                    .all(|w| w[0].0 < w[1].0 && w[0].1 == w[1].1),
                "{name}: rising, same total: {reports:?}"
            );
            assert!(reports.iter().all(|&(done, total)| done <= total));

            let stop = Recording {
                cancel_after: Some(1),
                ..Recording::default()
            };
            let err = schema(&stop).expect_err(name);
            assert!(matches!(err, FileError::Cancelled), "{name}: {err}");
            let after = stop.reports.into_inner().unwrap().len();
            assert_eq!(after, 1, "{name}: no work after the cancellation");
        }
    }
    // Text line counts (summarize, deep reads) stop too.
    let path = dir.path().join("log.txt");
    let stop = Recording {
        cancel_after: Some(1),
        ..Recording::default()
    };
    let err = Inspector::default()
        .summarize(open(&path), &path, 10, &stop)
        .expect_err("cancelled");
    assert!(matches!(err, FileError::Cancelled), "{err}");
    assert_eq!(stop.reports.into_inner().unwrap().len(), 1);
}
