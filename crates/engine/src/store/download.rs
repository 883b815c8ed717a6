//! Stored downloads: a fetched URL's body written into the default directory like a stored
//! answer (whole or absent, never overwriting, its final path checked, uploaded to a bucket
//! root the same way), with a record that says where it came from.

use std::time::Duration;

use serde_json::json;

use super::place::Place;
use super::{Record, Store, names, write};
use crate::ToolError;
use crate::roots::Roots;
use offload_formats::files::compressed::Codec;

/// What the record of a download keeps.
pub struct DownloadRequest<'a> {
    /// The URL asked for, and where the body came from after redirects.
    pub url: &'a url::Url,
    pub final_url: &'a url::Url,
    /// The answer's `Content-Type`, if it gave one.
    pub content_type: Option<&'a str>,
    pub duration: Duration,
}

impl Store {
    /// Writes the body `fill` streams as a new file in the default directory and records it
    /// (server `offload`, tool `download`, the URL and content type as its arguments).
    pub fn store_download(
        &self,
        roots: &Roots,
        req: DownloadRequest<'_>,
        fill: impl FnOnce(&mut (dyn std::io::Write + Send)) -> std::io::Result<()>,
    ) -> Result<Record, ToolError> {
        let place = Place::of(roots, None, &self.staging)?;
        let name = download_name(req.final_url, req.content_type);
        let started = std::time::Instant::now();
        let (path, bytes, ()) = write::write_new(place.dir(), &name, fill)?;
        let at = place
            .publish(roots, &[path], 0)?
            .pop()
            .expect("one published file");
        let mime_type = essence(req.content_type)
            .map(str::to_owned)
            .unwrap_or_else(|| {
                mime_guess::from_path(&name)
                    .first_or_octet_stream()
                    .to_string()
            });
        let record = Record {
            id: name.clone(),
            time: chrono::Utc::now(),
            server: "offload".into(),
            tool: "download".into(),
            arguments: json!({
                "url": req.url.as_str(),
                "final_url": req.final_url.as_str(),
                "content_type": req.content_type,
            }),
            description: Some(format!("Downloaded from {}", req.url)),
            duration_ms: (req.duration + started.elapsed()).as_millis() as u64,
            bytes,
            format: names::extension(&name).unwrap_or_default(),
            mime_type,
            path: at.path,
            uri: at.uri,
            files: Vec::new(),
            summary: None,
            recovered: false,
        };
        match place.bucket() {
            Some(bucket) => self.buckets.add(bucket, &record),
            None => self.record(&record),
        }
        Ok(record)
    }
}

/// `download-<host>-<last segment>-<time>-<random>.<ext>`: the extension the URL's last
/// segment has (`.csv`, `.csv.gz`), else the one its content type names, else `bin`; the file
/// tools go by it.
fn download_name(url: &url::Url, content_type: Option<&str>) -> String {
    let last = url
        .path_segments()
        .and_then(|mut s| s.next_back())
        .filter(|s| !s.is_empty())
        .unwrap_or("index");
    let last = percent_encoding::percent_decode_str(last).decode_utf8_lossy();
    let (inner, codec) = Codec::split(&last);
    let (stem, ext) = match inner.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() && !ext.is_empty() && ext.len() <= 8 => {
            (stem, Some(names::sanitize(&ext.to_ascii_lowercase(), 8)))
        }
        // `rows.gz` holds something unnamed: it stays `.gz`.
        _ if codec.is_some() => (inner, None),
        _ => {
            let ext = essence(content_type)
                .and_then(mime_guess::get_mime_extensions_str)
                .and_then(preferred)
                .unwrap_or("bin");
            (inner, Some(ext.to_owned()))
        }
    };
    let ext = match (ext, codec) {
        (Some(ext), Some(codec)) => format!("{ext}.{}", codec.extension()),
        (Some(ext), None) => ext,
        (None, Some(codec)) => codec.extension().to_owned(),
        (None, None) => "bin".to_owned(),
    };
    let what = format!("{}-{stem}", url.host_str().unwrap_or("host"));
    names::default_name("download", &what, chrono::Utc::now(), &ext)
}

/// A `Content-Type` without its parameters (`text/csv; charset=utf-8` → `text/csv`).
fn essence(content_type: Option<&str>) -> Option<&str> {
    let t = content_type?.split(';').next()?.trim();
    (!t.is_empty()).then_some(t)
}

/// The usual extension among a MIME type's (`text/plain` → `txt`, not `asc`).
fn preferred(extensions: &'static [&'static str]) -> Option<&'static str> {
    [
        "txt", "json", "csv", "html", "xml", "yaml", "md", "pdf", "png", "jpg",
    ]
    .into_iter()
    .find(|e| extensions.contains(e))
    .or_else(|| extensions.first().copied())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(url: &str, content_type: Option<&str>) -> String {
        download_name(&url::Url::parse(url).unwrap(), content_type)
    }

    #[test]
    fn names_keep_the_extension_the_file_tools_go_by() {
        let n = name("https://data.example.com/r/sales%202026.csv?x=1", None);
        assert!(
            n.starts_with("download-data.example.com-sales-2026-"),
            "{n}"
        );
        assert!(n.ends_with(".csv"), "{n}");
        assert!(name("https://x.org/rows.csv.gz", Some("application/gzip")).ends_with(".csv.gz"));
        assert!(
            name(
                "https://api.x.org/repos/a",
                Some("application/json; charset=utf-8")
            )
            .ends_with(".json")
        );
        assert!(name("https://x.org/", Some("text/plain")).ends_with(".txt"));
        assert!(name("https://x.org/blob", None).ends_with(".bin"));
        let n = name("https://x.org/rows.gz", Some("application/gzip"));
        assert!(n.ends_with(".gz") && !n.ends_with(".gz.gz"), "{n}");
        // Hostile segments stay a plain name.
        let n = name("https://x.org/..%2F..%2Fetc%2Fpasswd", None);
        assert!(!n.contains('/') && n.starts_with("download-x.org-"), "{n}");
        let (_, tool, _) = names::parse_default(&n).unwrap();
        assert!(tool.starts_with("x.org-"), "{tool}");
    }
}
