//! The URLs the file tools may fetch (`urls.allow`), as the Directories screen shows and edits
//! them. Only the user adds patterns; the model never can.

use serde::Serialize;
use serde_json::{Map, Value};

use super::edit::{ControlError, edit_config};
use crate::Engine;
use crate::config::edit::EditError;
use crate::urls::Pattern;

/// The patterns and the limits of a fetch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct UrlsView {
    pub allow: Vec<UrlPatternView>,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub max_bytes: u64,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub timeout_secs: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct UrlPatternView {
    pub pattern: String,
    /// Why it is skipped, when it does not parse (a hand edit).
    pub problem: Option<String>,
    /// True when its host has no `*`: that host may be on a private or loopback address.
    pub names_host: bool,
}

pub fn urls(engine: &Engine) -> UrlsView {
    let config = engine.config().urls.clone();
    let allow = config
        .allow
        .iter()
        .map(|p| match Pattern::parse(p) {
            Ok(parsed) => UrlPatternView {
                pattern: p.clone(),
                problem: None,
                names_host: parsed.names_host(),
            },
            Err(e) => UrlPatternView {
                pattern: p.clone(),
                problem: Some(e),
                names_host: false,
            },
        })
        .collect();
    UrlsView {
        allow,
        max_bytes: config.max_bytes,
        timeout_secs: config.timeout_secs,
    }
}

/// Adds a pattern (checked first; refused when it is there already).
pub async fn allow_url(engine: &Engine, pattern: &str) -> Result<(), ControlError> {
    let pattern = pattern.trim().to_owned();
    Pattern::parse(&pattern)
        .map_err(|e| ControlError::invalid(format!("'{pattern}' is not a URL pattern: {e}")))?;
    edit_config(engine, |doc| {
        let mut allow = patterns(doc)?;
        if allow.contains(&pattern) {
            return Err(EditError::Invalid(format!(
                "'{pattern}' is already allowed"
            )));
        }
        allow.push(pattern.clone());
        set_patterns(doc, allow)
    })
    .await
}

pub async fn remove_url(engine: &Engine, pattern: &str) -> Result<(), ControlError> {
    edit_config(engine, |doc| {
        let mut allow = patterns(doc)?;
        let at = allow
            .iter()
            .position(|p| p == pattern)
            .ok_or_else(|| EditError::Invalid(format!("'{pattern}' is not in urls.allow")))?;
        allow.remove(at);
        set_patterns(doc, allow)
    })
    .await
}

fn patterns(doc: &Map<String, Value>) -> Result<Vec<String>, EditError> {
    match doc.get("urls").and_then(|u| u.get("allow")) {
        None => Ok(Vec::new()),
        Some(v) => serde_json::from_value(v.clone()).map_err(|e| {
            EditError::Invalid(format!("\"urls.allow\" is not a list of patterns: {e}"))
        }),
    }
}

/// Replaces `urls.allow`, keeping the other keys of `urls`.
fn set_patterns(doc: &mut Map<String, Value>, allow: Vec<String>) -> Result<(), EditError> {
    let urls = doc
        .entry("urls")
        .or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(urls) = urls else {
        return Err(EditError::Invalid("\"urls\" is not an object".into()));
    };
    urls.insert("allow".into(), Value::from(allow));
    Ok(())
}
