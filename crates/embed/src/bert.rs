//! A BERT encoder (all-MiniLM and its kin: 384 numbers a piece, heads of 32) run from the
//! weights of its ONNX file: the word-piece, position and token-type tables, then each layer's
//! attention and feed-forward, each followed by a layer norm. The weights are found by the
//! names the transformers library gives the biases and norms (`encoder.layer.N.attention.self.
//! query.bias`, ...), each matrix through the node that adds its bias; int8 matrices are turned
//! into floats once, at load, and the word table is kept as int8, a row made float when read.
//!
//! Several texts run as one: their pieces are the rows of one matrix for every product with the
//! weights, and each text attends only to its own pieces, so nothing is padded.

use ndarray::{Array1, Array2, Axis, Slice};

use crate::attention::{Attend, Text};
use crate::kernel::{self, Packed, Products};
use crate::onnx::{Floats, Graph, Tensor, Weights};

/// Numbers a head attends with.
const HEAD: usize = 32;

struct Norm {
    gain: Array1<f32>,
    bias: Array1<f32>,
    epsilon: f32,
}

impl Norm {
    fn apply(&self, x: &mut Array2<f32>) {
        kernel::normalize(
            x.as_slice_mut().expect("a standard matrix"),
            self.gain.as_slice().expect("a vector"),
            self.bias.as_slice().expect("a vector"),
            self.epsilon,
        );
    }
}

struct Layer {
    query: Packed,
    key: Packed,
    value: Packed,
    attended: Packed,
    attention_norm: Norm,
    widen: Packed,
    narrow: Packed,
    norm: Norm,
}

/// A table of rows looked up by id: floats, or int8 rows with a scale each.
enum Table {
    Floats(Array2<f32>),
    Int8 {
        rows: Vec<i8>,
        scales: Vec<f32>,
        width: usize,
    },
}

impl Table {
    fn len(&self) -> usize {
        match self {
            Table::Floats(t) => t.nrows(),
            Table::Int8 { scales, .. } => scales.len(),
        }
    }

    fn add_row(&self, id: usize, out: &mut [f32]) {
        match self {
            Table::Floats(t) => {
                for (o, v) in out.iter_mut().zip(t.row(id)) {
                    *o += v;
                }
            }
            Table::Int8 {
                rows,
                scales,
                width,
            } => {
                let row = &rows[id * width..(id + 1) * width];
                for (o, &v) in out.iter_mut().zip(row) {
                    *o += f32::from(v) * scales[id];
                }
            }
        }
    }
}

pub struct Bert {
    words: Table,
    positions: Table,
    /// The first token type's row (every piece of one text is of type 0).
    kind: Array1<f32>,
    norm: Norm,
    layers: Vec<Layer>,
    width: usize,
}

impl Bert {
    /// The encoder whose weights `graph` holds.
    pub fn from_graph(graph: &Graph, products: Products) -> Result<Self, String> {
        let w = Weights::new(graph);
        let epsilon = graph
            .node
            .iter()
            .find(|n| n.op_type == "LayerNormalization")
            .and_then(|n| n.attribute.iter().find(|a| a.name == "epsilon"))
            .map_or(1e-12, |a| a.f);
        let words = table(&w, "input_ids")?;
        let width = match &words {
            Table::Floats(t) => t.ncols(),
            Table::Int8 { width, .. } => *width,
        };
        let positions = gathered(&w, "embeddings.position_embeddings.weight")?
            .ok_or("it has no position table")?;
        let kind = match gathered(&w, "embeddings.token_type_embeddings.weight")? {
            Some(types) => {
                let mut first = vec![0f32; width];
                types.add_row(0, &mut first);
                Array1::from(first)
            }
            None => Array1::zeros(width),
        };
        let norm = norm(&w, "embeddings.LayerNorm", epsilon)?;
        let mut layers = Vec::new();
        while let Some(layer) = layer(&w, layers.len(), epsilon, products)? {
            layers.push(layer);
        }
        if layers.is_empty() || width % HEAD != 0 || positions.len() == 0 {
            return Err("it has no encoder layers of heads of 32".into());
        }
        Ok(Bert {
            words,
            positions,
            kind,
            norm,
            layers,
            width,
        })
    }

    /// How many word pieces the model knows.
    pub fn vocabulary(&self) -> usize {
        self.words.len()
    }

    /// The most pieces (start and end included) a text may have.
    pub fn positions(&self) -> usize {
        self.positions.len()
    }

    pub fn width(&self) -> usize {
        self.width
    }

    /// The last layer's vector of every piece of each text (`texts` as ids, start and end
    /// pieces included), the texts' rows one after another.
    pub fn run(&self, texts: &[Vec<usize>]) -> Array2<f32> {
        let total: usize = texts.iter().map(Vec::len).sum();
        let mut x = Array2::<f32>::zeros((total, self.width));
        let mut at = 0;
        for text in texts {
            for (position, &id) in text.iter().enumerate() {
                let mut row = x.row_mut(at);
                let row = row.as_slice_mut().expect("a row of a standard matrix");
                self.words.add_row(id, row);
                self.positions.add_row(position, row);
                for (o, k) in row.iter_mut().zip(&self.kind) {
                    *o += k;
                }
                at += 1;
            }
        }
        self.norm.apply(&mut x);
        let spans = Text::spans(texts.iter().map(Vec::len));
        for layer in &self.layers {
            let view = x.view();
            let (q, k, v) = (
                layer.query.apply(&view),
                layer.key.apply(&view),
                layer.value.apply(&view),
            );
            let mut context = Array2::<f32>::zeros((total, self.width));
            Attend {
                q: standard(&q),
                k: standard(&k),
                v: standard(&v),
                width: self.width,
                head: HEAD,
                texts: &spans,
                out: context.as_slice_mut().expect("a standard matrix"),
            }
            .run();
            let mut attended = layer.attended.apply(&context.view()) + &x;
            layer.attention_norm.apply(&mut attended);
            let mut wide = layer.widen.apply(&attended.view());
            kernel::gelu(wide.as_slice_mut().expect("a standard matrix"));
            let mut out = layer.narrow.apply(&wide.view()) + &attended;
            layer.norm.apply(&mut out);
            x = out;
        }
        x
    }

    /// The mean of each text's rows of `states`, of length 1.
    pub fn pool(states: &Array2<f32>, texts: &[Vec<usize>]) -> Vec<Vec<f32>> {
        let mut start = 0;
        texts
            .iter()
            .map(|text| {
                let rows = states.slice_axis(Axis(0), Slice::from(start..start + text.len()));
                start += text.len();
                let mean = rows
                    .mean_axis(Axis(0))
                    .expect("a text has its start and end");
                let norm = mean.dot(&mean).sqrt();
                mean.iter()
                    .map(|v| if norm > 0.0 { v / norm } else { *v })
                    .collect()
            })
            .collect()
    }
}

fn standard(m: &Array2<f32>) -> &[f32] {
    m.as_slice().expect("a standard matrix")
}

fn floats(t: &Tensor) -> Result<Floats, String> {
    crate::onnx::float_tensor(t)
}

fn matrix(f: Floats) -> Result<Array2<f32>, String> {
    match f.dims[..] {
        [rows, cols] => Array2::from_shape_vec((rows, cols), f.values).map_err(|e| e.to_string()),
        _ => Err(format!("a matrix of shape {:?}", f.dims)),
    }
}

/// The table the ids of `input` are looked up in.
fn table(w: &Weights, input: &str) -> Result<Table, String> {
    let gather = w
        .readers(input)
        .find(|n| n.op_type == "Gather")
        .ok_or_else(|| format!("nothing looks {input} up"))?;
    table_of(w, &gather.input[0])
}

/// The table a `Gather` reads whose name ends with `suffix`, if the graph has one.
fn gathered(w: &Weights, suffix: &str) -> Result<Option<Table>, String> {
    match w.gathers().find(|n| n.input[0].ends_with(suffix)) {
        Some(gather) => table_of(w, &gather.input[0]).map(Some),
        None => Ok(None),
    }
}

/// A table as the graph holds it: int8 rows with a scale each stay int8.
fn table_of(w: &Weights, value: &str) -> Result<Table, String> {
    if let Some(mul) = w.producer(value).filter(|n| n.op_type == "Mul")
        && let Some(cast) = w.producer(&mul.input[0]).filter(|n| n.op_type == "Cast")
        && let (Some(q), Some(scale)) = (
            w.constants.get(cast.input[0].as_str()),
            w.constants.get(mul.input[1].as_str()),
        )
        && q.data_type == 3
        && q.dims.len() == 2
        && scale.dims == [q.dims[0], 1]
    {
        let width = q.dims[1] as usize;
        let rows: Vec<i8> = q.raw_data.iter().map(|&b| b as i8).collect();
        let scales = floats(scale)?.values;
        if rows.len() != scales.len() * width {
            return Err(format!("{}: not {} rows of {width}", q.name, scales.len()));
        }
        return Ok(Table::Int8 {
            rows,
            scales,
            width,
        });
    }
    Ok(Table::Floats(matrix(w.floats(value)?)?))
}

fn norm(w: &Weights, name: &str, epsilon: f32) -> Result<Norm, String> {
    let part = |p: &str| -> Result<Array1<f32>, String> {
        let t = w
            .ending(&format!("{name}.{p}"))
            .ok_or_else(|| format!("it has no {name}.{p}"))?;
        Ok(Array1::from(floats(t)?.values))
    };
    Ok(Norm {
        gain: part("weight")?,
        bias: part("bias")?,
        epsilon,
    })
}

/// The product whose bias is the initializer named `…{name}.bias`: its matrix is what the
/// node adding that bias adds it to.
fn linear(w: &Weights, name: &str, products: Products) -> Result<Packed, String> {
    let bias = w
        .ending(&format!("{name}.bias"))
        .ok_or_else(|| format!("it has no {name}.bias"))?;
    let add = w
        .readers(&bias.name)
        .find(|n| n.op_type == "Add")
        .ok_or_else(|| format!("nothing adds {}", bias.name))?;
    let product = add
        .input
        .iter()
        .find(|i| **i != bias.name)
        .and_then(|i| w.producer(i))
        .filter(|n| n.op_type == "MatMul")
        .ok_or_else(|| format!("{} is not added to a product", bias.name))?;
    let bias = Array1::from(floats(bias)?.values);
    // An int8 matrix comes as floats, each column's scale applied once, here.
    let f = w.floats(&product.input[1])?;
    if f.dims.len() != 2 || f.dims[1] != bias.len() {
        return Err(format!(
            "{name}: a matrix of shape {:?} for {} biases",
            f.dims,
            bias.len()
        ));
    }
    Ok(Packed::new(products, &matrix(f)?, bias.to_vec()))
}

fn layer(w: &Weights, n: usize, epsilon: f32, products: Products) -> Result<Option<Layer>, String> {
    let at = format!("encoder.layer.{n}.");
    if w.ending(&format!("{at}attention.self.query.bias"))
        .is_none()
    {
        return Ok(None);
    }
    let part = |p: &str| linear(w, &format!("{at}{p}"), products);
    Ok(Some(Layer {
        query: part("attention.self.query")?,
        key: part("attention.self.key")?,
        value: part("attention.self.value")?,
        attended: part("attention.output.dense")?,
        attention_norm: norm(w, &format!("{at}attention.output.LayerNorm"), epsilon)?,
        widen: part("intermediate.dense")?,
        narrow: part("output.dense")?,
        norm: norm(w, &format!("{at}output.LayerNorm"), epsilon)?,
    }))
}
