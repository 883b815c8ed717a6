//! How well `list_available_tools` finds the tool a request describes, on public tool-retrieval
//! sets (`crates/bench/data/search`, made by `scripts/search-sets.py`: MetaTool's 199 plugins and
//! 20,614 requests; BFCL's 1,096 functions and 1,911 requests) and on the tools of the servers
//! Offload is tested with (`scripts/search-own.py`: 50 tools of five published servers, 501
//! requests written for them; and `models`: 61 tools of eight, 634 requests written as models
//! phrase a search, `model-requests.txt`, fixed before any tuning), scored by top-1, top-5 and
//! nDCG@5 for Offload's ranking (`offload-search`) beside Okapi BM25 over the same text (the
//! baseline clients use), in the same run; each installed sentence model weighed alone and
//! fused, reading the tools as offload gives them and without their parameters, and the first
//! two models together; then how long a search takes at ~2,000 tools.

use std::collections::{BTreeMap, HashMap};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use offload_search::{Doc, Fusion, Index};
use offload_testkit::{TestContext, call, connect, tool_definition};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::offload::as_users;

use crate::stats::{header, row, summarize};

mod sentences;
use sentences::Embedded;

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

pub async fn run(data: &Path, model_paths: &[PathBuf], speed_only: bool) -> anyhow::Result<()> {
    if speed_only {
        let bfcl = load(&data.join("bfcl.json.gz"))?;
        let models = model_paths
            .iter()
            .map(|path| Ok((label_of(path), sentences::load(path)?)))
            .collect::<anyhow::Result<Vec<_>>>()?;
        let timed: Vec<(&str, &offload_embed::Sentences)> =
            models.iter().map(|(l, m)| (l.as_str(), m)).collect();
        speed(&bfcl, &timed);
        return Ok(());
    }
    let names = ["metatool", "bfcl", "own", "models"];
    let sets: Vec<Set> = names
        .iter()
        .map(|name| load(&data.join(format!("{name}.json.gz"))))
        .collect::<anyhow::Result<_>>()?;
    // Each model: its name and the sets embedded; then each way of ranking with them: its
    // name, the sets' vectors, the words' weight beside it and whether that weight is scaled by
    // how well the request's words match.
    let mut models = Vec::new();
    let mut rankers: Vec<(String, Vec<Embedded>, f32, bool)> = Vec::new();
    for path in model_paths {
        let model = sentences::load(path)?;
        let label = label_of(path);
        let mut embedded = Vec::new();
        let mut without_params = Vec::new();
        for (name, set) in names.iter().zip(&sets) {
            let with_server = Index::names_servers(set.tools.iter().map(|t| t.server.as_str()));
            // The tools' texts as offload gives them to the model (parameters and all).
            let set_embedded = sentences::embed_set(
                &model,
                name,
                set.tools
                    .iter()
                    .map(|t| Index::meaning_text(&doc(t, &params(t)), with_server))
                    .collect(),
                set.queries.iter().map(|q| q.q.clone()).collect(),
            )?;
            // The same requests beside tools known without their parameters' text.
            without_params.push(Embedded {
                tools: sentences::embed_all(
                    &model,
                    &set.tools
                        .iter()
                        .map(|t| Index::meaning_text(&doc(t, ""), with_server))
                        .collect::<Vec<_>>(),
                )?,
                queries: set_embedded.queries.clone(),
            });
            embedded.push(set_embedded);
        }
        // The words' weight beside the model, picked on MetaTool's first requests only.
        let words = pick_weight(&sets[0], &embedded[0], false);
        let plain_words = pick_weight(&sets[0], &without_params[0], false);
        // The first model's words weighed by how well they match, beside the fixed weight.
        if models.is_empty() {
            let by_match = pick_weight(&sets[0], &embedded[0], true);
            rankers.push((
                format!("{label}, words weighed by match"),
                embedded.clone(),
                by_match,
                true,
            ));
        }
        rankers.push((label.clone(), embedded, words, false));
        rankers.push((
            format!("{label}, without parameters"),
            without_params,
            plain_words,
            false,
        ));
        models.push((label, model));
    }
    // The first two models together: each vector the two models' halves, so that their
    // closeness is the mean of the two models'.
    let shipped = rankers.iter().filter(|r| !r.3);
    let firsts: Vec<_> = shipped.step_by(2).take(2).collect();
    if let [(first, a, _, _), (second, b, _, _)] = &firsts[..] {
        let both: Vec<Embedded> = a
            .iter()
            .zip(b)
            .map(|(a, b)| sentences::joined(a, b))
            .collect();
        let words = pick_weight(&sets[0], &both[0], false);
        rankers.push((format!("{first} and {second}"), both, words, false));
    }
    println!();
    for (i, (name, set)) in names.iter().zip(&sets).enumerate() {
        let scored: Vec<(&str, &Embedded, f32, bool)> = rankers
            .iter()
            .map(|(label, embedded, words, by_match)| {
                (label.as_str(), &embedded[i], *words, *by_match)
            })
            .collect();
        score(name, set, &scored);
        // MetaTool's requests the weight was picked on are not asked through offload either.
        let held_out = if i == 0 { TUNING } else { 0 };
        through_offload(set, held_out, None).await?;
        // As installed: the first model, the one the setup puts beside offload.
        if let Some(path) = model_paths.first() {
            through_offload(set, held_out, Some(path)).await?;
        }
    }
    let timed: Vec<(&str, &offload_embed::Sentences)> = models
        .iter()
        .map(|(label, model)| (label.as_str(), model))
        .collect();
    speed(&sets[1], &timed);
    Ok(())
}

/// A model's name in the bench's lines: its file's, without the extension.
fn label_of(path: &Path) -> String {
    path.file_stem()
        .map_or_else(|| "model".into(), |s| s.to_string_lossy().into_owned())
}

/// The sentence model where `scripts/setup-model.sh` installs it, and the candidate beside it
/// (`--candidate`), those that are there.
pub fn installed_models() -> Vec<PathBuf> {
    let shipped = offload_testkit::search_model_path();
    let candidate = shipped.with_file_name(CANDIDATE);
    if !shipped.is_file() {
        println!("no sentence model (scripts/setup-model.sh installs it): scored without it");
    }
    [shipped, candidate]
        .into_iter()
        .filter(|p| p.is_file())
        .collect()
}

/// The faster model weighed against the shipped one (`scripts/setup-model.sh --candidate`).
const CANDIDATE: &str = "paraphrase-MiniLM-L3-v2.onnx";

/// MetaTool's requests the fusion's weight is picked on; the rest are held out.
const TUNING: usize = 2_000;

/// The words' weight that ranks MetaTool's first [`TUNING`] requests best (top-1 plus top-5),
/// from 0 to 1 by 0.05; `by_match`: scaled by how well each request's words match.
fn pick_weight(set: &Set, embedded: &Embedded, by_match: bool) -> f32 {
    let index = index_of(set).with_sentences(embedded.tools.clone());
    let parts: Vec<_> = set.queries[..TUNING.min(set.queries.len())]
        .iter()
        .zip(&embedded.queries)
        .map(|(q, v)| (index.parts(&q.q, Some(v)), &q.relevant))
        .collect();
    let mut best = (f64::MIN, 0.0);
    for step in 0..=20u8 {
        let words = f32::from(step) / 20.0;
        let fusion = Fusion {
            words,
            every_tool: true,
            by_match,
        };
        let mut scores = Scores::default();
        for (p, relevant) in &parts {
            let ranked: Vec<usize> = p.rank(fusion, 5).iter().map(|h| h.doc).collect();
            scores.add(&ranked, relevant);
        }
        if scores.top1 + scores.top5 > best.0 {
            best = (scores.top1 + scores.top5, words);
        }
    }
    println!(
        "the words' weight beside the sentence model{}, picked on MetaTool's first {TUNING} requests: {:.2} (built in: {:.2})",
        if by_match { ", scaled by match" } else { "" },
        best.1,
        Fusion::SENTENCES.words
    );
    best.1
}

fn doc<'a>(t: &'a Tool, params: &'a str) -> Doc<'a> {
    Doc {
        server: &t.server,
        name: &t.name,
        description: &t.description,
        params,
        ..Doc::default()
    }
}

fn index_of(set: &Set) -> Index {
    let params: Vec<String> = set.tools.iter().map(params).collect();
    Index::new(set.tools.iter().zip(&params).map(|(t, p)| doc(t, p)))
}

/// The same requests (from the `from`th on) asked of `list_available_tools` through `offload
/// mcp`, the set's tools served by a fixture upstream: what a model gets, and the bytes of each
/// answer.
async fn through_offload(set: &Set, from: usize, model: Option<&Path>) -> anyhow::Result<()> {
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
    let mut command = ctx.offload_command(&["--expose", "meta"]);
    command.env("OFFLOAD_SEARCH_MODEL", model.unwrap_or(Path::new("")));
    let client = connect(as_users(command)).await;
    if let Some(q) = set.queries.first().filter(|_| model.is_some()) {
        // Until the catalog's vectors are made, a search waits its bound and ranks with the
        // built-in meaning; scored once a search answers within it.
        for _ in 0..600 {
            let t = Instant::now();
            call(&client, "list_available_tools", json!({"query": q.q})).await;
            if t.elapsed() < Duration::from_secs(1) {
                break;
            }
        }
    }
    let position: HashMap<(&str, &str), usize> = set
        .tools
        .iter()
        .enumerate()
        .map(|(i, t)| ((server_of(t), t.name.as_str()), i))
        .collect();
    let mut scores = Scores::default();
    let (mut bytes, mut times) = (Vec::new(), Vec::new());
    for q in set.queries.iter().skip(from) {
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
    let label = if model.is_some() {
        "through offload mcp, model"
    } else {
        "through offload mcp"
    };
    println!("{}", scores.line(label));
    let n = scores.n.max(1) as f64;
    // The requests written as models ask are held to a top-5 of 95 %; the public sets to
    // 60 / 90.
    let (top1, top5) = if set.source.contains("model-requests") {
        (0.0, 0.95)
    } else {
        (0.6, 0.9)
    };
    let met = scores.top1 / n >= top1 && scores.top5 / n >= top5;
    println!(
        "  target (top-1 >= {:.0}%, top-5 >= {:.0}%, through offload mcp): {}",
        top1 * 100.0,
        top5 * 100.0,
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

/// The static ranking beside BM25 on every request; then, on the requests no weight was picked
/// on, each model (its name, the set embedded, the words' weight beside it) alone and fused.
fn score(name: &str, set: &Set, models: &[(&str, &Embedded, f32, bool)]) {
    let params: Vec<String> = set.tools.iter().map(params).collect();
    let index = index_of(set);
    let baseline = Bm25::new(
        set.tools
            .iter()
            .zip(&params)
            .map(|(t, p)| format!("{} {} {p}", t.name, t.description)),
    );
    // MetaTool's requests the weight was picked on are not scored beside a model.
    let held_out = if name == "metatool" { TUNING } else { 0 };
    let (mut ours, mut base) = (Scores::default(), Scores::default());
    let (mut ours_held, mut base_held) = (Scores::default(), Scores::default());
    for (i, q) in set.queries.iter().enumerate() {
        let ranked: Vec<usize> = index.search(&q.q, 5).iter().map(|h| h.doc).collect();
        let base_ranked = baseline.search(&q.q, 5);
        ours.add(&ranked, &q.relevant);
        base.add(&base_ranked, &q.relevant);
        if i >= held_out {
            ours_held.add(&ranked, &q.relevant);
            base_held.add(&base_ranked, &q.relevant);
        }
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
    if models.is_empty() {
        return;
    }
    if held_out > 0 {
        println!("  the {} requests no weight was picked on:", ours_held.n);
        println!("{}", ours_held.line("offload-search, static"));
        println!("{}", base_held.line("BM25 (one field)"));
    }
    for &(label, embedded, words, by_match) in models {
        let index = index_of(set).with_sentences(embedded.tools.clone());
        let (mut alone, mut fused, mut built_in) =
            (Scores::default(), Scores::default(), Scores::default());
        for (i, q) in set.queries.iter().enumerate().skip(held_out) {
            let parts = index.parts(&q.q, Some(&embedded.queries[i]));
            let rank = |fusion: Fusion| -> Vec<usize> {
                parts.rank(fusion, 5).iter().map(|h| h.doc).collect()
            };
            let every = |words| Fusion {
                words,
                every_tool: true,
                by_match,
            };
            alone.add(&rank(every(0.0)), &q.relevant);
            fused.add(&rank(every(words)), &q.relevant);
            built_in.add(&rank(Fusion::SENTENCES), &q.relevant);
        }
        println!("  {label}:");
        println!("{}", alone.line("sentence model alone"));
        println!("{}", fused.line(&format!("words {words:.2} + sentences")));
        println!(
            "{}",
            built_in.line(&format!("words {:.2} + sentences", Fusion::SENTENCES.words))
        );
    }
}

/// A search at about 2,000 tools: BFCL's functions twice, under two servers.
fn speed(set: &Set, models: &[(&str, &offload_embed::Sentences)]) {
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
    // With a sentence model: the tools' vectors are made once (kept with the catalog); each
    // search embeds the request on this thread and ranks every tool.
    let with_server = Index::names_servers(docs.iter().map(|d| d.server));
    let texts: Vec<String> = docs
        .iter()
        .map(|d| Index::meaning_text(d, with_server))
        .collect();
    for &(label, model) in models {
        let t = Instant::now();
        let Ok(vectors) = sentences::embed_all(model, &texts) else {
            println!("{label} failed on the tools");
            continue;
        };
        let embedded = t.elapsed();
        let index = Index::new(docs.iter().copied()).with_sentences(vectors);
        let mut times = Vec::new();
        for q in &set.queries {
            let t = Instant::now();
            let pieces = offload_search::meaning::request_pieces(&q.q);
            if let Ok(v) = model.embed(&pieces) {
                std::hint::black_box(index.search_with(&q.q, Some(&v), 5));
            }
            times.push(t.elapsed());
        }
        let s = summarize(&mut times);
        println!(
            "with {label}: the {} tools embedded once in {:.1} s; a search, the request embedded, {:.2} ms median, {:.2} ms p99",
            index.len(),
            embedded.as_secs_f64(),
            s.median.as_secs_f64() * 1e3,
            s.p99.as_secs_f64() * 1e3
        );
        println!(
            "  target (<= 15 ms a search at 2,000 tools, one core): {}",
            if s.p99 <= Duration::from_millis(15) {
                "met"
            } else {
                "NOT met"
            }
        );
    }
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
