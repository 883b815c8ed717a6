//! `urls.allow` patterns: `https://data.example.com/reports/*`. A pattern names a scheme, a
//! host (which may hold `*`, as in `*.example.com`), an optional port and a path; `*` matches
//! any characters and everything else is literal (a `?` is a question mark). A pattern without
//! a path allows the whole host. The host and the path are matched apart, so a `*` in the host
//! never reaches into the path and a URL's user-info can never pose as an allowed host.

use globset::{GlobBuilder, GlobMatcher};
use url::Url;

#[derive(Debug, Clone)]
pub struct Pattern {
    text: String,
    scheme: String,
    host: Host,
    port: u16,
    /// Path and query (`/a/b?x=1`).
    path: GlobMatcher,
}

#[derive(Debug, Clone)]
enum Host {
    /// Without `*`, compared as the URL crate writes hosts (lower case, IPv6 in brackets).
    Exact(String),
    Glob(GlobMatcher),
}

impl Pattern {
    pub fn parse(text: &str) -> Result<Self, String> {
        let trimmed = text.trim();
        let (scheme, rest) = trimmed
            .split_once("://")
            .ok_or("it needs a scheme, as in https://example.com/*")?;
        let scheme = scheme.to_ascii_lowercase();
        let default_port = match scheme.as_str() {
            "https" => 443,
            "http" => 80,
            _ => {
                return Err(format!(
                    "only http and https URLs are fetched, not {scheme}"
                ));
            }
        };
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, "/*"),
        };
        if authority.contains('@') {
            return Err("it may not hold a user name or password".into());
        }
        let (host, port) = split_port(authority)?;
        let host = host.to_ascii_lowercase();
        if host.is_empty() {
            return Err("it names no host".into());
        }
        let host = if host.contains('*') {
            if host.chars().any(|c| c == '/' || c.is_whitespace()) {
                return Err("its host is not a host name".into());
            }
            Host::Glob(glob(&host)?)
        } else {
            // Normalised as URLs are (IDNA, IPv6 brackets), so the comparison is exact.
            let probe = Url::parse(&format!("{scheme}://{host}/"))
                .map_err(|e| format!("its host is not valid: {e}"))?;
            Host::Exact(probe.host_str().unwrap_or_default().to_owned())
        };
        Ok(Self {
            text: trimmed.to_owned(),
            scheme,
            host,
            port: port.unwrap_or(default_port),
            path: glob(path)?,
        })
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// True when the pattern names its host without `*`: such a host may be on a private,
    /// loopback or link-local address (the user asked for that very host).
    pub fn names_host(&self) -> bool {
        matches!(self.host, Host::Exact(_))
    }

    pub fn matches(&self, url: &Url) -> bool {
        if url.scheme() != self.scheme || url.port_or_known_default() != Some(self.port) {
            return false;
        }
        let Some(host) = url.host_str() else {
            return false;
        };
        let host_ok = match &self.host {
            Host::Exact(h) => h == host,
            Host::Glob(g) => g.is_match(host),
        };
        let path = match url.query() {
            Some(q) => format!("{}?{q}", url.path()),
            None => url.path().to_owned(),
        };
        host_ok && self.path.is_match(&path)
    }
}

fn split_port(authority: &str) -> Result<(&str, Option<u16>), String> {
    // `[::1]:8080`, `[::1]`, `host:8080`, `host`.
    let (host, port) = if let Some(end) = authority.strip_prefix('[').and_then(|a| a.find(']')) {
        let end = end + 1;
        let rest = &authority[end + 1..];
        (&authority[..=end], rest.strip_prefix(':'))
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (authority, None),
        }
    };
    let port = match port {
        None => None,
        Some(p) => Some(
            p.parse()
                .map_err(|_| format!("its port {p:?} is not a number"))?,
        ),
    };
    Ok((host, port))
}

/// A glob where only `*` is special (matching anything, `/` included).
fn glob(pattern: &str) -> Result<GlobMatcher, String> {
    let escaped: Vec<String> = pattern.split('*').map(globset::escape).collect();
    GlobBuilder::new(&escaped.join("*"))
        .literal_separator(false)
        .backslash_escape(true)
        .build()
        .map(|g| g.compile_matcher())
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn allows(pattern: &str, url: &str) -> bool {
        Pattern::parse(pattern)
            .unwrap()
            .matches(&Url::parse(url).unwrap())
    }

    #[test]
    fn star_matches_anything_and_the_rest_is_literal() {
        let p = "https://data.example.com/reports/*";
        assert!(allows(p, "https://data.example.com/reports/2026/q1.csv"));
        assert!(allows(p, "https://data.example.com/reports/a.csv?raw=1"));
        assert!(!allows(p, "https://data.example.com/other.csv"));
        assert!(
            !allows(p, "http://data.example.com/reports/a.csv"),
            "scheme"
        );
        assert!(
            !allows(p, "https://data.example.com:8443/reports/a.csv"),
            "port"
        );
        assert!(!allows(
            p,
            "https://data.example.com.evil.net/reports/a.csv"
        ));
        // `?` and brackets are literal.
        assert!(allows(
            "https://x.org/a.csv?raw=1",
            "https://x.org/a.csv?raw=1"
        ));
        assert!(!allows(
            "https://x.org/a.csv?raw=1",
            "https://x.org/a.csv_raw=1"
        ));
        assert!(!allows("https://x.org/a.csv", "https://x.org/a.csv?raw=1"));
    }

    #[test]
    fn a_host_alone_allows_the_host_and_hosts_compare_normalised() {
        assert!(allows(
            "https://Example.COM",
            "https://example.com/any/thing"
        ));
        assert!(allows("https://example.com", "https://EXAMPLE.com:443/x"));
        assert!(allows("http://127.0.0.1:8080", "http://127.0.0.1:8080/x"));
        assert!(!allows("http://127.0.0.1:8080", "http://127.0.0.1:8081/x"));
        assert!(allows("http://[::1]:9000/*", "http://[::1]:9000/x"));
    }

    #[test]
    fn a_wildcard_host_stays_in_the_host() {
        let p = "https://*.example.com/*";
        assert!(allows(p, "https://a.example.com/x"));
        assert!(allows(p, "https://a.b.example.com/x"));
        assert!(!allows(p, "https://example.com.evil.net/x"));
        assert!(!allows(p, "https://evil.net/.example.com/x"));
        // User-info cannot pose as the host: the URL's host is evil.net.
        assert!(!allows(
            "https://example.com/*",
            "https://example.com@evil.net/x"
        ));
        assert!(!allows(p, "https://a.example.com@evil.net/x"));
        assert!(!Pattern::parse(p).unwrap().names_host());
        assert!(Pattern::parse("http://localhost:1/*").unwrap().names_host());
    }

    #[test]
    fn dot_segments_and_encodings_are_resolved_before_matching() {
        let p = "https://example.com/public/*";
        // The URL crate resolves `..` (also encoded as %2e%2e) before the comparison.
        assert!(!allows(p, "https://example.com/public/../private/x"));
        assert!(!allows(p, "https://example.com/public/%2e%2e/private/x"));
    }

    #[test]
    fn bad_patterns_say_why() {
        for (p, why) in [
            ("example.com/*", "scheme"),
            ("ftp://example.com/*", "only http and https"),
            ("https://user:pw@example.com/*", "user name"),
            ("https://example.com:http/*", "port"),
            ("https:///x", "host"),
        ] {
            let e = Pattern::parse(p).unwrap_err();
            assert!(e.contains(why), "{p}: {e}");
        }
    }
}
