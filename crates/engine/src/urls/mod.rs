//! Reading URLs. An `http(s)://` URL in a file tool's path, in `call_tool_with_file_content`'s
//! files or in a `$file` reference is fetched into the default directory (a stored download
//! with its record: URL, time, content type; `server::downloads` does that) and then read as
//! that file, so paging, schemas, queries and batches work on it exactly as on a local file.
//!
//! Deny by default: only URLs matching a `urls.allow` pattern are fetched, each redirect is
//! checked the same way, hosts on private, loopback or link-local addresses only through a
//! pattern that names them, with a size limit and a deadline (`fetch`). A URL fetched in the
//! last five minutes is read from its download again instead of fetched twice (a model paging
//! through it makes several calls).

mod address;
mod allow;
pub(crate) mod fetch;

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use url::Url;

pub use allow::Pattern;
pub use fetch::shown;

use crate::ToolError;
use crate::config::UrlsConfig;

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
    /// Where `url` was downloaded to in the last minutes, if that file is still there.
    pub fn recent(&self, url: &Url) -> Option<String> {
        let mut recent = self.recent.lock().unwrap_or_else(|p| p.into_inner());
        recent.retain(|_, (_, at)| at.elapsed() < REUSE);
        let (path, _) = recent.get(url.as_str())?;
        // A download the user deleted meanwhile is fetched again.
        (crate::objects::is_object_url(path) || std::path::Path::new(path).exists())
            .then(|| path.clone())
    }

    /// Notes where `url` was downloaded to.
    pub fn remember(&self, url: &Url, path: &str) {
        let mut recent = self.recent.lock().unwrap_or_else(|p| p.into_inner());
        recent.insert(
            url.to_string(),
            (path.to_owned(), std::time::Instant::now()),
        );
    }
}
