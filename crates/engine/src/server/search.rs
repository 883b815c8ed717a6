//! Finding the upstream tool a model describes in its own words: "remember a fact about a
//! person" should find server-memory's `add_observations`, "what changed in the repo" git's
//! `git_diff`. A query's words are stemmed (Snowball, English), widened with synonyms of the
//! verbs and nouns people use for tools, and matched against each tool's name, title and
//! description and its server's name — exactly, by stem, or fuzzily (typos). Stop words do not
//! count. Tools are ranked by how many query words they match and where.

use std::collections::HashSet;

use rmcp::model::Tool;
use rust_stemmers::{Algorithm, Stemmer};

/// Words that say nothing about which tool is meant.
const STOP_WORDS: &[&str] = &[
    "a", "an", "the", "of", "to", "for", "in", "on", "about", "with", "and", "or", "my", "me",
    "what", "which", "is", "are", "was", "were", "do", "does", "did", "i", "you", "it", "its",
    "from", "into", "by", "at", "this", "that", "these", "those", "some", "any", "all", "can",
    "could", "would", "should", "please", "how", "tool", "tools", "want", "need", "use", "using",
    "be", "been", "there", "here", "new", "so", "up",
];

/// Groups of words that mean the same for finding a tool.
const SYNONYMS: &[&[&str]] = &[
    &[
        "remember", "store", "save", "memorize", "record", "add", "create", "write", "put",
        "insert", "keep", "note",
    ],
    &[
        "find", "search", "look", "lookup", "query", "seek", "locate", "grep", "match",
    ],
    &[
        "get", "fetch", "retrieve", "read", "show", "view", "open", "load", "download", "list",
    ],
    &[
        "change", "diff", "modify", "update", "edit", "status", "log", "history", "differ",
    ],
    &[
        "delete", "remove", "erase", "drop", "destroy", "clear", "unlink",
    ],
    &["repo", "repository", "git", "commit", "branch", "version"],
    &[
        "person", "people", "entity", "user", "contact", "human", "someone",
    ],
    &[
        "fact",
        "observation",
        "knowledge",
        "memory",
        "information",
        "detail",
        "relation",
    ],
    &[
        "time", "date", "clock", "timezone", "zone", "hour", "now", "today",
    ],
    &[
        "file",
        "document",
        "directory",
        "folder",
        "path",
        "filesystem",
    ],
    &["run", "execute", "call", "invoke", "launch", "start"],
    &["message", "mail", "email", "send", "post", "notify"],
    &["weather", "forecast", "temperature"],
    &["database", "sql", "table", "db", "sqlite", "row"],
    &["web", "internet", "url", "http", "page", "site", "browse"],
    &["image", "picture", "photo", "screenshot"],
    &["sum", "add", "calculate", "compute", "math", "total"],
    &["convert", "transform", "translate"],
];

/// One query word: its stem and the stems of its synonyms.
struct Term {
    stems: HashSet<String>,
    /// The word itself, for fuzzy matching.
    word: String,
}

/// A prepared query.
pub struct Query {
    terms: Vec<Term>,
    stemmer: Stemmer,
}

fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .flat_map(split_camel)
        .map(|w| w.to_lowercase())
}

/// `getCurrentTime` → get, Current, Time.
fn split_camel(word: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut start = 0;
    let bytes = word.as_bytes();
    for i in 1..bytes.len() {
        if bytes[i].is_ascii_uppercase() && bytes[i - 1].is_ascii_lowercase() {
            parts.push(&word[start..i]);
            start = i;
        }
    }
    parts.push(&word[start..]);
    parts
}

impl Query {
    /// The query's meaningful words; `None` when it has none.
    pub fn new(text: &str) -> Option<Self> {
        let stemmer = Stemmer::create(Algorithm::English);
        let terms: Vec<Term> = words(text)
            .filter(|w| !STOP_WORDS.contains(&w.as_str()))
            .map(|word| {
                let stem = stemmer.stem(&word).into_owned();
                let mut stems: HashSet<String> = HashSet::from([stem.clone(), word.clone()]);
                for group in SYNONYMS {
                    if group
                        .iter()
                        .any(|g| *g == word || stemmer.stem(g) == stem.as_str())
                    {
                        stems.extend(group.iter().map(|g| stemmer.stem(g).into_owned()));
                    }
                }
                Term { stems, word }
            })
            .collect();
        (!terms.is_empty()).then_some(Self { terms, stemmer })
    }

    fn stems_of(&self, text: &str) -> Vec<(String, String)> {
        words(text)
            .map(|w| (self.stemmer.stem(&w).into_owned(), w))
            .collect()
    }

    /// How well `tool` of `server` matches (0 for not at all), and whether any word matched
    /// better than fuzzily.
    pub fn score(&self, server: &str, tool: &Tool) -> (u32, bool) {
        let name = self.stems_of(&tool.name);
        let title = self.stems_of(tool.title.as_deref().unwrap_or(""));
        let desc = self.stems_of(tool.description.as_deref().unwrap_or(""));
        let server = self.stems_of(server);
        let mut score = 0;
        let mut matched = 0;
        let mut sure = false;
        for term in &self.terms {
            let hit = |field: &[(String, String)]| -> u32 {
                if field.iter().any(|(_, w)| *w == term.word) {
                    3
                } else if field.iter().any(|(s, _)| term.stems.contains(s)) {
                    2
                } else if term.word.len() >= 5
                    && field
                        .iter()
                        .any(|(_, w)| w.len() >= 5 && strsim::jaro_winkler(w, &term.word) >= 0.9)
                {
                    1
                } else {
                    0
                }
            };
            let s = [
                (hit(&name), 4),
                (hit(&title), 3),
                (hit(&server), 2),
                (hit(&desc), 1),
            ]
            .iter()
            .map(|(h, weight)| h * weight)
            .max()
            .unwrap_or(0);
            if s > 0 {
                matched += 1;
            }
            sure |= [&name, &title, &server, &desc].iter().any(|f| hit(f) >= 2);
            score += s;
        }
        if matched == 0 {
            (0, false)
        } else {
            (score + 20 * matched, sure)
        }
    }
}

/// The tools that match `query`, best first (then by server and name).
pub fn rank<'a>(query: &str, tools: Vec<(&'a str, &'a Tool)>) -> Vec<(&'a str, &'a Tool)> {
    let Some(q) = Query::new(query) else {
        return tools;
    };
    let scored: Vec<(u32, bool, (&str, &Tool))> = tools
        .into_iter()
        .filter_map(|(server, tool)| {
            let (s, sure) = q.score(server, tool);
            (s > 0).then_some((s, sure, (server, tool)))
        })
        .collect();
    // Typo matches only count when nothing matched for sure ("counter" is not "count").
    let any_sure = scored.iter().any(|(_, sure, _)| *sure);
    let mut scored: Vec<(u32, (&str, &Tool))> = scored
        .into_iter()
        .filter(|(_, sure, _)| *sure || !any_sure)
        .map(|(s, _, t)| (s, t))
        .collect();
    scored.sort_by(|a, b| {
        b.0.cmp(&a.0)
            .then_with(|| a.1.0.cmp(b.1.0))
            .then_with(|| a.1.1.name.cmp(&b.1.1.name))
    });
    scored.into_iter().map(|(_, t)| t).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn t(name: &str, desc: &str) -> Tool {
        Tool::new(
            name.to_owned(),
            desc.to_owned(),
            Arc::new(Default::default()),
        )
    }

    fn names<'a>(query: &str, tools: &'a [(&'a str, Tool)]) -> Vec<&'a str> {
        let list = tools.iter().map(|(s, t)| (*s, t)).collect();
        rank(query, list)
            .iter()
            .map(|(_, t)| t.name.as_ref())
            .collect()
    }

    /// The tools of the published servers people run (their real names and descriptions).
    fn published() -> Vec<(&'static str, Tool)> {
        vec![
            (
                "memory",
                t(
                    "create_entities",
                    "Create multiple new entities in the knowledge graph",
                ),
            ),
            (
                "memory",
                t(
                    "add_observations",
                    "Add new observations to existing entities in the knowledge graph",
                ),
            ),
            ("memory", t("read_graph", "Read the entire knowledge graph")),
            (
                "memory",
                t(
                    "search_nodes",
                    "Search for nodes in the knowledge graph based on a query",
                ),
            ),
            ("git", t("git_status", "Shows the working tree status")),
            (
                "git",
                t(
                    "git_diff_unstaged",
                    "Shows changes in the working directory that are not yet staged",
                ),
            ),
            ("git", t("git_log", "Shows the commit logs")),
            (
                "time",
                t(
                    "get_current_time",
                    "Get current time in a specific timezones",
                ),
            ),
            (
                "filesystem",
                t(
                    "read_text_file",
                    "Read the complete contents of a file from the file system as text.",
                ),
            ),
            ("weather", t("get_forecast", "Weather forecast for a city")),
        ]
    }

    #[test]
    fn people_find_tools_in_their_own_words() {
        let tools = published();
        let found = names("remember a fact about a person", &tools);
        assert!(
            found
                .iter()
                .take(3)
                .any(|n| *n == "add_observations" || *n == "create_entities"),
            "{found:?}"
        );
        let found = names("what changed in the repo", &tools);
        assert!(found[0].starts_with("git_"), "{found:?}");
        assert!(names("what time is it in Tokyo", &tools)[0] == "get_current_time");
        assert_eq!(
            names("wheather forcast", &tools)[0],
            "get_forecast",
            "typos"
        );
        assert_eq!(names("weather forecast", &tools)[0], "get_forecast");
        assert!(names("zzzz qqqq", &tools).is_empty());
    }

    #[test]
    fn non_matches_are_dropped_and_case_does_not_matter() {
        let tools = vec![
            ("fs", t("Read_File", "reads")),
            ("fs", t("write", "writes")),
        ];
        assert_eq!(names("READ", &tools), ["Read_File"]);
    }

    #[test]
    fn names_are_split_and_stop_words_ignored() {
        let tools = vec![
            ("s", t("getCurrentWeather", "")),
            ("s", t("echo", "Echo text")),
        ];
        assert_eq!(names("current weather", &tools), ["getCurrentWeather"]);
        assert!(Query::new("the of a").is_none());
    }
}
