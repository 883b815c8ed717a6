//! How well `list_available_tools` finds the tool a request describes, on public tool-retrieval
//! sets (`crates/bench/data/search`, made by `scripts/search-sets.py`: MetaTool's 199 plugins and
//! 20,614 requests; BFCL's 1,096 functions and 1,911 requests) and on the tools of the servers
//! Offload is tested with (`scripts/search-own.py`: 50 tools of five published servers, 501
//! requests written for them; and `models`: 61 tools of eight, 634 requests written as models
//! phrase a search, `model-requests.txt`, fixed before any tuning), scored by top-1, top-5 and
//! nDCG@5 for Offload's ranking (`offload-search`) beside Okapi BM25 over the same text (the
//! baseline clients use), in the same run; then how long a search takes at ~2,000 tools.

use std::collections::{BTreeMap, HashMap};
use std::io::Read;
use std::path::Path;
use std::time::{Duration, Instant};

use offload_search::{Doc, Index};
use offload_testkit::{TestContext, call, connect, tool_definition};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::offload::as_users;

use crate::stats::{header, row, summarize};

#[derive(Deserialize)]
struct Set {
    source: String,
    tools: Vec<Tool>,
    queries: Vec<Query>,
}

#[derive(Deserialize)]
struct Tool {
    /// The server a tool is on; the public sets have none (one server, "set").
    #[serde(default)]
    server: String,
    name: String,
    description: String,
    params: Vec<(String, String)>,
}

#[derive(Deserialize)]
struct Query {
    q: String,
    relevant: Vec<usize>,
}

fn load(path: &Path) -> anyhow::Result<Set> {
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path)?).read_to_string(&mut text)?;
    Ok(serde_json::from_str(&text)?)
}

/// Parameters as one text: names and descriptions.
fn params(tool: &Tool) -> String {
    tool.params
        .iter()
        .map(|(n, d)| format!("{n} {d}"))
        .collect::<Vec<_>>()
        .join(" ")
}

pub async fn run(data: &Path) -> anyhow::Result<()> {
    for name in ["metatool", "bfcl", "own", "models"] {
        let set = load(&data.join(format!("{name}.json.gz")))?;
        score(name, &set);
        through_offload(&set).await?;
    }
    speed(&load(&data.join("bfcl.json.gz"))?);
    Ok(())
}

/// The same requests asked of `list_available_tools` through `offload mcp`, the set's tools
/// served by a fixture upstream: what a model gets, and the bytes of each answer.
async fn through_offload(set: &Set) -> anyhow::Result<()> {
    let ctx = TestContext::new();
    let mut catalogs: BTreeMap<&str, Vec<Value>> = BTreeMap::new();
    for t in &set.tools {
        catalogs
            .entry(server_of(t))
            .or_default()
            .push(tool_definition(&t.name, &t.description, &t.params));
    }
    let servers: serde_json::Map<String, Value> = catalogs
        .iter()
        .map(|(server, catalog)| (server.to_string(), ctx.fixture_serving(catalog)))
        .collect();
    ctx.write_servers(Value::Object(servers));
    let client = connect(as_users(ctx.offload_command(&["--expose", "meta"]))).await;
    let position: HashMap<(&str, &str), usize> = set
        .tools
        .iter()
        .enumerate()
        .map(|(i, t)| ((server_of(t), t.name.as_str()), i))
        .collect();
    let mut scores = Scores::default();
    let (mut bytes, mut times) = (Vec::new(), Vec::new());
    for q in &set.queries {
        let t = Instant::now();
        let r = call(&client, "list_available_tools", json!({"query": q.q})).await;
        times.push(t.elapsed());
        bytes.push(serde_json::to_string(&r)?.len() as f64);
        let ranked: Vec<usize> = r
            .structured_content
            .as_ref()
            .and_then(|s| s["tools"].as_array())
            .into_iter()
            .flatten()
            .filter_map(|t| {
                let key = (t["server"].as_str()?, t["tool"].as_str()?);
                position.get(&key).copied()
            })
            .collect();
        scores.add(&ranked, &q.relevant);
    }
    client.cancel().await?;
    let time = summarize(&mut times);
    println!("{}", scores.line("through offload mcp"));
    let n = scores.n.max(1) as f64;
    let met = scores.top1 / n >= 0.6 && scores.top5 / n >= 0.9;
    println!(
        "  target (top-1 >= 60%, top-5 >= 90%, through offload mcp): {}",
        if met { "met" } else { "NOT met" }
    );
    println!(
        "  its answers: median {:.0} bytes, mean {:.0}, largest {:.0}; a search {:.3} ms median, {:.3} ms p99 (over MCP)",
        crate::stats::median(&mut bytes.clone()),
        bytes.iter().sum::<f64>() / bytes.len().max(1) as f64,
        bytes.iter().copied().fold(0.0, f64::max),
        time.median.as_secs_f64() * 1e3,
        time.p99.as_secs_f64() * 1e3,
    );
    println!();
    Ok(())
}

/// The server a set's tool is served by.
fn server_of(tool: &Tool) -> &str {
    if tool.server.is_empty() {
        "set"
    } else {
        &tool.server
    }
}

/// top-1, top-5 and nDCG@5 summed over queries.
#[derive(Default)]
struct Scores {
    top1: f64,
    top5: f64,
    ndcg: f64,
    n: usize,
}

impl Scores {
    fn add(&mut self, ranked: &[usize], relevant: &[usize]) {
        let hit = |d: &usize| relevant.contains(d);
        self.top1 += f64::from(ranked.first().is_some_and(hit));
        self.top5 += f64::from(ranked.iter().take(5).any(hit));
        let dcg: f64 = ranked
            .iter()
            .take(5)
            .enumerate()
            .filter(|(_, d)| hit(d))
            .map(|(i, _)| 1.0 / (i as f64 + 2.0).log2())
            .sum();
        let ideal: f64 = (0..relevant.len().min(5))
            .map(|i| 1.0 / (i as f64 + 2.0).log2())
            .sum();
        self.ndcg += dcg / ideal.max(f64::EPSILON);
        self.n += 1;
    }

    fn line(&self, label: &str) -> String {
        let n = self.n.max(1) as f64;
        format!(
            "{label:<28} {:>7.1}% {:>7.1}% {:>8.3}",
            100.0 * self.top1 / n,
            100.0 * self.top5 / n,
            self.ndcg / n
        )
    }
}

fn score(name: &str, set: &Set) {
    let params: Vec<String> = set.tools.iter().map(params).collect();
    let index = Index::new(set.tools.iter().zip(&params).map(|(t, p)| Doc {
        server: &t.server,
        name: &t.name,
        description: &t.description,
        params: p,
        ..Doc::default()
    }));
    let baseline = Bm25::new(
        set.tools
            .iter()
            .zip(&params)
            .map(|(t, p)| format!("{} {} {p}", t.name, t.description)),
    );
    let (mut ours, mut base) = (Scores::default(), Scores::default());
    for q in &set.queries {
        let ranked: Vec<usize> = index.search(&q.q, 5).iter().map(|h| h.doc).collect();
        ours.add(&ranked, &q.relevant);
        base.add(&baseline.search(&q.q, 5), &q.relevant);
    }
    println!(
        "{name}: {} tools, {} requests ({})",
        set.tools.len(),
        set.queries.len(),
        set.source
    );
    println!("{:<28} {:>8} {:>8} {:>8}", "", "top-1", "top-5", "nDCG@5");
    println!("{}", ours.line("offload-search (BM25F+meaning)"));
    println!("{}", base.line("BM25 (one field)"));
}

/// A search at about 2,000 tools: BFCL's functions twice, under two servers.
fn speed(set: &Set) {
    let params: Vec<String> = set.tools.iter().map(params).collect();
    let docs: Vec<Doc> = ["a", "b"]
        .iter()
        .flat_map(|server| {
            set.tools.iter().zip(&params).map(move |(t, p)| Doc {
                server,
                name: &t.name,
                description: &t.description,
                params: p,
                ..Doc::default()
            })
        })
        .collect();
    let t = Instant::now();
    let index = Index::new(docs.iter().copied());
    let built = t.elapsed();
    let baseline = Bm25::new(
        docs.iter()
            .map(|d| format!("{} {} {}", d.name, d.description, d.params)),
    );
    let (mut ours, mut base) = (Vec::new(), Vec::new());
    for q in &set.queries {
        let t = Instant::now();
        std::hint::black_box(index.search(&q.q, 5));
        ours.push(t.elapsed());
        let t = Instant::now();
        std::hint::black_box(baseline.search(&q.q, 5));
        base.push(t.elapsed());
    }
    let (o, b) = (summarize(&mut ours), summarize(&mut base));
    println!(
        "a search among {} tools ({} requests), beside BM25; the index built once in {:.1} ms",
        index.len(),
        set.queries.len(),
        built.as_secs_f64() * 1e3
    );
    println!("{}", header("Offload", "BM25"));
    println!("{}", row("median", o.median, b.median));
    println!("{}", row("p99", o.p99, b.p99));
    println!(
        "target (<= 5 ms a search at 2,000 tools): {}",
        if o.p99 <= Duration::from_millis(5) {
            "met"
        } else {
            "NOT met"
        }
    );
}

/// Okapi BM25 over one field of lower-cased words (k1 1.2, b 0.75), no stemming: the baseline.
struct Bm25 {
    postings: HashMap<String, Vec<(usize, f64)>>,
    lengths: Vec<f64>,
    average: f64,
}

fn tokens(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
}

impl Bm25 {
    fn new(docs: impl Iterator<Item = String>) -> Self {
        let mut postings: HashMap<String, Vec<(usize, f64)>> = HashMap::new();
        let mut lengths = Vec::new();
        for (i, text) in docs.enumerate() {
            let mut counts: HashMap<String, f64> = HashMap::new();
            let mut length = 0.0;
            for t in tokens(&text) {
                *counts.entry(t).or_default() += 1.0;
                length += 1.0;
            }
            for (t, c) in counts {
                postings.entry(t).or_default().push((i, c));
            }
            lengths.push(length);
        }
        let average = lengths.iter().sum::<f64>() / lengths.len().max(1) as f64;
        Bm25 {
            postings,
            lengths,
            average,
        }
    }

    fn search(&self, query: &str, limit: usize) -> Vec<usize> {
        let n = self.lengths.len() as f64;
        let mut words: Vec<String> = tokens(query).collect();
        words.sort();
        words.dedup();
        let mut scores: HashMap<usize, f64> = HashMap::new();
        for w in &words {
            let Some(p) = self.postings.get(w) else {
                continue;
            };
            let df = p.len() as f64;
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            for (doc, tf) in p {
                let norm = 1.0 - 0.75 + 0.75 * self.lengths[*doc] / self.average.max(f64::EPSILON);
                *scores.entry(*doc).or_default() += idf * tf * 2.2 / (tf + 1.2 * norm);
            }
        }
        let mut ranked: Vec<(usize, f64)> = scores.into_iter().collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        ranked.into_iter().take(limit).map(|(d, _)| d).collect()
    }
}
