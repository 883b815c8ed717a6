//! The sentence model's part of the search bench: each set's tools and requests embedded once,
//! the words' weight in the fusion picked on one set of requests and reported on others, and
//! the model alone beside it.

use std::path::Path;
use std::time::Instant;

use offload_embed::{Products, Sentences};
use offload_search::meaning::{pieces, request_pieces};

/// A set's tools and requests as the sentence model sees them.
#[derive(Clone)]
pub struct Embedded {
    pub tools: Vec<Vec<f32>>,
    pub queries: Vec<Vec<f32>>,
}

pub fn load(path: &Path, products: Products) -> anyhow::Result<Sentences> {
    let t = Instant::now();
    let model = Sentences::load_with(path, products)?;
    println!(
        "sentence model: {} ({:.1} MB), ready in {:.2} s, its products in {}",
        path.display(),
        std::fs::metadata(path)?.len() as f64 / 1e6,
        t.elapsed().as_secs_f64(),
        if products.in_integers() {
            "8-bit integers (AVX-512 VNNI)"
        } else {
            "floats"
        }
    );
    Ok(model)
}

/// The vectors of `texts`, in their order.
pub fn embed_all(model: &Sentences, texts: &[String]) -> anyhow::Result<Vec<Vec<f32>>> {
    let split: Vec<Vec<u32>> = texts.iter().map(|t| pieces(t)).collect();
    Ok(model.embed_all(&split)?)
}

/// A set embedded, with the time it took.
pub fn embed_set(
    model: &Sentences,
    name: &str,
    tools: Vec<String>,
    queries: Vec<String>,
) -> anyhow::Result<Embedded> {
    let t = Instant::now();
    let tools = embed_all(model, &tools)?;
    let tools_took = t.elapsed();
    let t = Instant::now();
    let split: Vec<Vec<u32>> = queries.iter().map(|q| request_pieces(q)).collect();
    let queries = model.embed_all(&split)?;
    println!(
        "  {name}: {} tools embedded in {:.1} s, {} requests in {:.1} s ({:.2} ms a request, in passes of {})",
        tools.len(),
        tools_took.as_secs_f64(),
        queries.len(),
        t.elapsed().as_secs_f64(),
        t.elapsed().as_secs_f64() * 1e3 / queries.len().max(1) as f64,
        offload_embed::BATCH
    );
    Ok(Embedded { tools, queries })
}

/// Two models' vectors of the same set as one: each vector the two halves, each scaled by
/// 1/√2, so that the closeness of two joined vectors is the mean of the models' closeness.
pub fn joined(a: &Embedded, b: &Embedded) -> Embedded {
    let join = |x: &[Vec<f32>], y: &[Vec<f32>]| -> Vec<Vec<f32>> {
        x.iter()
            .zip(y)
            .map(|(x, y)| {
                x.iter()
                    .chain(y)
                    .map(|v| v * std::f32::consts::FRAC_1_SQRT_2)
                    .collect()
            })
            .collect()
    };
    Embedded {
        tools: join(&a.tools, &b.tools),
        queries: join(&a.queries, &b.queries),
    }
}
