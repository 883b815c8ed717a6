//! An upstream's most recent log messages (`notifications/message`), kept whoever its caller
//! was, for the app's Servers screen. Bounded by count and message size.
#![allow(deprecated)] // logging: deprecated by 2026-07-28 (SEP-2577), still what servers send

use std::collections::VecDeque;
use std::sync::Mutex;

use rmcp::model::LoggingMessageNotificationParam;
use serde::Serialize;

/// How many messages a server's log keeps.
const KEEP: usize = 500;
/// The longest message kept (longer ones are cut).
const LONGEST: usize = 4096;

/// One log message of an upstream.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct LogLine {
    /// RFC 3339.
    pub time: String,
    /// `debug` … `emergency`.
    pub level: String,
    pub logger: Option<String>,
    /// The message's `data`: a string as it is, anything else as JSON.
    pub message: String,
}

#[derive(Debug, Default)]
pub struct LogRing(Mutex<VecDeque<LogLine>>);

impl LogRing {
    pub fn push(&self, message: &LoggingMessageNotificationParam) {
        let text = match &message.data {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let level = serde_json::to_value(message.level)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        let line = LogLine {
            time: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            level,
            logger: message.logger.clone(),
            message: offload_formats::clip::clip(&text, LONGEST).into_owned(),
        };
        let mut lines = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if lines.len() == KEEP {
            lines.pop_front();
        }
        lines.push_back(line);
    }

    /// The kept messages, oldest first.
    pub fn lines(&self) -> Vec<LogLine> {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .cloned()
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::LoggingLevel;

    #[test]
    fn keeps_the_latest_messages_cut_to_size() {
        let ring = LogRing::default();
        for i in 0..(KEEP + 3) {
            ring.push(&LoggingMessageNotificationParam::new(
                LoggingLevel::Info,
                serde_json::json!(format!("m{i}")),
            ));
        }
        let lines = ring.lines();
        assert_eq!(lines.len(), KEEP);
        assert_eq!(lines[0].message, "m3");
        assert_eq!(lines[0].level, "info");
        ring.push(&LoggingMessageNotificationParam::new(
            LoggingLevel::Error,
            serde_json::json!({"big": "x".repeat(10_000)}),
        ));
        let last = ring.lines().pop().unwrap();
        assert_eq!(last.level, "error");
        assert!(last.message.len() <= LONGEST + 8 && last.message.starts_with("{\"big\""));
    }
}
