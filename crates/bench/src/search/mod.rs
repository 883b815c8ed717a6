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

use std::io::Read;
use std::path::{Path, PathBuf};

use offload_embed::Products;
use offload_search::{Doc, Fusion, Index};
use serde::Deserialize;

mod baseline;
mod sentences;
mod served;
mod speed;
use baseline::Bm25;
use sentences::Embedded;
use served::through_offload;
use speed::{first_read, speed};

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

/// Each model as installed; then, where the products run in 8-bit integers, the first one with
/// its products in floats beside it (its own arithmetic: the baseline of the integers').
fn variants(model_paths: &[PathBuf]) -> Vec<(&Path, Products, String)> {
    let mut all: Vec<_> = model_paths
        .iter()
        .map(|p| (p.as_path(), Products::Fastest, label_of(p)))
        .collect();
    if let Some(first) = model_paths.first()
        && Products::Fastest.in_integers()
    {
        all.push((
            first,
            Products::Floats,
            format!("{} in floats", label_of(first)),
        ));
    }
    all
}

pub async fn run(data: &Path, model_paths: &[PathBuf], speed_only: bool) -> anyhow::Result<()> {
    // First, while nothing has read the built-in word pieces yet.
    first_read();
    if speed_only {
        let bfcl = load(&data.join("bfcl.json.gz"))?;
        let models = variants(model_paths)
            .into_iter()
            .map(|(path, products, label)| Ok((label, sentences::load(path, products)?)))
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
    // Each model: its name and the sets embedded; then each way of ranking with them.
    let mut models = Vec::new();
    let mut rankers: Vec<Ranker> = Vec::new();
    let mut by_match = None;
    for (path, products, label) in variants(model_paths) {
        let model = sentences::load(path, products)?;
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
            by_match = Some(Ranker {
                label: format!("{label}, words weighed by match"),
                words: pick_weight(&sets[0], &embedded[0], true),
                embedded: embedded.clone(),
                by_match: true,
            });
        }
        rankers.push(Ranker::fixed(label.clone(), embedded, words));
        rankers.push(Ranker::fixed(
            format!("{label}, without parameters"),
            without_params,
            plain_words,
        ));
        models.push((label, model));
    }
    // The first two models together: each vector the two models' halves, so that their
    // closeness is the mean of the two models'.
    if let [first, _, second, ..] = &rankers[..] {
        let both: Vec<Embedded> = first
            .embedded
            .iter()
            .zip(&second.embedded)
            .map(|(a, b)| sentences::joined(a, b))
            .collect();
        let words = pick_weight(&sets[0], &both[0], false);
        let label = format!("{} and {}", first.label, second.label);
        rankers.push(Ranker::fixed(label, both, words));
    }
    rankers.extend(by_match);
    println!();
    for (i, (name, set)) in names.iter().zip(&sets).enumerate() {
        score(name, set, i, &rankers);
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

/// A way of ranking with a model: its name in the lines, each set's vectors, the words' weight
/// beside it and whether that weight is scaled by how well a request's words match.
struct Ranker {
    label: String,
    embedded: Vec<Embedded>,
    words: f32,
    by_match: bool,
}

impl Ranker {
    fn fixed(label: String, embedded: Vec<Embedded>, words: f32) -> Self {
        Self {
            label,
            embedded,
            words,
            by_match: false,
        }
    }
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
/// on, each ranker (with the vectors of the `nth` set) alone and fused.
fn score(name: &str, set: &Set, nth: usize, rankers: &[Ranker]) {
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
    if rankers.is_empty() {
        return;
    }
    if held_out > 0 {
        println!("  the {} requests no weight was picked on:", ours_held.n);
        println!("{}", ours_held.line("offload-search, static"));
        println!("{}", base_held.line("BM25 (one field)"));
    }
    for ranker in rankers {
        let (embedded, words, by_match) = (&ranker.embedded[nth], ranker.words, ranker.by_match);
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
        println!("  {}:", ranker.label);
        println!("{}", alone.line("sentence model alone"));
        println!("{}", fused.line(&format!("words {words:.2} + sentences")));
        println!(
            "{}",
            built_in.line(&format!("words {:.2} + sentences", Fusion::SENTENCES.words))
        );
    }
}
