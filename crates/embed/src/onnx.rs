//! The few parts of an ONNX file a sentence model's weights are read from: its graph's nodes,
//! inputs and initializers (ONNX's `onnx.proto`, field numbers as there; the rest skipped).

use std::collections::HashMap;

#[derive(Clone, PartialEq, prost::Message)]
pub struct Model {
    #[prost(message, optional, tag = "7")]
    pub graph: Option<Graph>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Graph {
    #[prost(message, repeated, tag = "1")]
    pub node: Vec<Node>,
    #[prost(message, repeated, tag = "5")]
    pub initializer: Vec<Tensor>,
    #[prost(message, repeated, tag = "11")]
    pub input: Vec<Named>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Named {
    #[prost(string, tag = "1")]
    pub name: String,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Node {
    #[prost(string, repeated, tag = "1")]
    pub input: Vec<String>,
    #[prost(string, repeated, tag = "2")]
    pub output: Vec<String>,
    #[prost(string, tag = "4")]
    pub op_type: String,
    #[prost(message, repeated, tag = "5")]
    pub attribute: Vec<Attribute>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Attribute {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(float, tag = "2")]
    pub f: f32,
    #[prost(int64, tag = "3")]
    pub i: i64,
    #[prost(int64, repeated, tag = "8")]
    pub ints: Vec<i64>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Tensor {
    #[prost(int64, repeated, tag = "1")]
    pub dims: Vec<i64>,
    #[prost(int32, tag = "2")]
    pub data_type: i32,
    #[prost(float, repeated, tag = "4")]
    pub float_data: Vec<f32>,
    #[prost(int32, repeated, tag = "5")]
    pub int32_data: Vec<i32>,
    #[prost(string, tag = "8")]
    pub name: String,
    #[prost(bytes = "vec", tag = "9")]
    pub raw_data: Vec<u8>,
    #[prost(int32, tag = "14")]
    pub data_location: i32,
}

/// ONNX's element types read here.
const FLOAT: i32 = 1;
const INT8: i32 = 3;

/// A graph's constants and which node makes each value, to follow a weight back to its
/// initializer.
pub struct Weights<'a> {
    pub constants: HashMap<&'a str, &'a Tensor>,
    producer: HashMap<&'a str, &'a Node>,
    graph: &'a Graph,
}

/// A constant as floats, with its shape.
pub struct Floats {
    pub dims: Vec<usize>,
    pub values: Vec<f32>,
}

impl<'a> Weights<'a> {
    pub fn new(graph: &'a Graph) -> Self {
        Weights {
            constants: graph
                .initializer
                .iter()
                .map(|t| (t.name.as_str(), t))
                .collect(),
            producer: graph
                .node
                .iter()
                .flat_map(|n| n.output.iter().map(move |o| (o.as_str(), n)))
                .collect(),
            graph,
        }
    }

    /// The node that makes `value`.
    pub fn producer(&self, value: &str) -> Option<&'a Node> {
        self.producer.get(value).copied()
    }

    /// The nodes that read `value`.
    pub fn readers(&self, value: &str) -> impl Iterator<Item = &'a Node> {
        let value = value.to_owned();
        self.graph
            .node
            .iter()
            .filter(move |n| n.input.contains(&value))
    }

    /// The graph's `Gather` nodes (table lookups).
    pub fn gathers(&self) -> impl Iterator<Item = &'a Node> {
        self.graph
            .node
            .iter()
            .filter(|n| n.op_type == "Gather" && n.input.len() == 2)
    }

    /// The initializer whose name ends with `suffix`.
    pub fn ending(&self, suffix: &str) -> Option<&'a Tensor> {
        self.graph
            .initializer
            .iter()
            .find(|t| t.name.ends_with(suffix))
    }

    /// The floats `value` holds when it is a constant: a float initializer, an int8 one cast
    /// to floats and multiplied by a constant scale (per row or per column), or one of those
    /// transposed.
    pub fn floats(&self, value: &str) -> Result<Floats, String> {
        if let Some(t) = self.constants.get(value) {
            return float_tensor(t);
        }
        let node = self
            .producer(value)
            .ok_or_else(|| format!("{value} is neither a constant nor made by a node"))?;
        match node.op_type.as_str() {
            "Mul" if node.input.len() == 2 => {
                let (cast, scale) = match self.constants.get(node.input[1].as_str()) {
                    Some(scale) => (&node.input[0], *scale),
                    None => (
                        &node.input[1],
                        *self
                            .constants
                            .get(node.input[0].as_str())
                            .ok_or_else(|| format!("{value}: a product of no constant"))?,
                    ),
                };
                let cast = self
                    .producer(cast)
                    .filter(|n| n.op_type == "Cast")
                    .ok_or_else(|| format!("{value}: not a cast constant times a scale"))?;
                let table = self
                    .constants
                    .get(cast.input[0].as_str())
                    .ok_or_else(|| format!("{value}: the cast of no constant"))?;
                dequantize(table, &float_tensor(scale)?)
            }
            "Cast" => {
                let t = self
                    .constants
                    .get(node.input[0].as_str())
                    .ok_or_else(|| format!("{value}: the cast of no constant"))?;
                dequantize(
                    t,
                    &Floats {
                        dims: vec![1],
                        values: vec![1.0],
                    },
                )
            }
            "Transpose" => {
                let inner = self.floats(&node.input[0])?;
                let perm: Vec<i64> = node
                    .attribute
                    .iter()
                    .find(|a| a.name == "perm")
                    .map(|a| a.ints.clone())
                    .unwrap_or_else(|| vec![1, 0]);
                if inner.dims.len() != 2 || perm != [1, 0] {
                    return Err(format!("{value}: a transpose other than of a matrix"));
                }
                let (rows, cols) = (inner.dims[0], inner.dims[1]);
                let mut values = vec![0f32; rows * cols];
                for r in 0..rows {
                    for c in 0..cols {
                        values[c * rows + r] = inner.values[r * cols + c];
                    }
                }
                Ok(Floats {
                    dims: vec![cols, rows],
                    values,
                })
            }
            op => Err(format!("{value} is made by {op}, not read as weights")),
        }
    }
}

fn dims(t: &Tensor) -> Result<Vec<usize>, String> {
    t.dims
        .iter()
        .map(|&d| usize::try_from(d).map_err(|_| format!("{}: a negative dimension", t.name)))
        .collect()
}

pub fn float_tensor(t: &Tensor) -> Result<Floats, String> {
    let dims = dims(t)?;
    let count: usize = dims.iter().product();
    if t.data_type != FLOAT || t.data_location != 0 {
        return Err(format!("{} is not floats held in the file", t.name));
    }
    let values: Vec<f32> = if t.raw_data.is_empty() {
        t.float_data.clone()
    } else {
        t.raw_data
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect()
    };
    if values.len() != count {
        return Err(format!(
            "{}: {} values for a shape of {count}",
            t.name,
            values.len()
        ));
    }
    Ok(Floats { dims, values })
}

/// An int8 matrix times its scale, broadcast along rows (`[1, columns]`), columns
/// (`[rows, 1]`) or whole (`[1]`).
fn dequantize(t: &Tensor, scale: &Floats) -> Result<Floats, String> {
    let dims = dims(t)?;
    if t.data_type != INT8 || t.data_location != 0 || dims.len() != 2 {
        return Err(format!("{} is not an int8 matrix held in the file", t.name));
    }
    let (rows, cols) = (dims[0], dims[1]);
    let bytes: Vec<i8> = if t.raw_data.is_empty() {
        t.int32_data.iter().map(|&v| v as i8).collect()
    } else {
        t.raw_data.iter().map(|&b| b as i8).collect()
    };
    if bytes.len() != rows * cols {
        return Err(format!(
            "{}: {} values for {rows} × {cols}",
            t.name,
            bytes.len()
        ));
    }
    let factor = |r: usize, c: usize| -> Option<f32> {
        match scale.values.len() {
            1 => Some(scale.values[0]),
            n if n == cols && scale.dims.first() == Some(&1) => Some(scale.values[c]),
            n if n == rows => Some(scale.values[r]),
            _ => None,
        }
    };
    let mut values = Vec::with_capacity(rows * cols);
    for r in 0..rows {
        for c in 0..cols {
            let f = factor(r, c).ok_or_else(|| format!("{}: a scale of another shape", t.name))?;
            values.push(f32::from(bytes[r * cols + c]) * f);
        }
    }
    Ok(Floats { dims, values })
}
