//! One change to the model's graph before tract reads it, so that a text is embedded in
//! milliseconds rather than fifty.
//!
//! The int8 model stores its word-piece table (30,522 rows of 384) as `Cast(table_q) *
//! scale_per_row` followed by a `Gather` of the text's rows. tract folds constants only while
//! they stay under 4 MiB, so it would turn the whole 47 MB table into floats again on every
//! run. Gathering first — the int8 rows and their scales, then the cast and the product — gives
//! the same numbers for the few rows a text has.

use std::collections::{HashMap, HashSet};

use tract_onnx::pb::{GraphProto, NodeProto, TensorProto};

/// Rewrites the graph; answers how many rows the table `input_ids` are looked up in has (the
/// vocabulary's size), if it is such a table.
pub fn gather_before_dequantizing(graph: &mut GraphProto) -> Option<usize> {
    let constants: HashMap<&str, &TensorProto> = graph
        .initializer
        .iter()
        .map(|t| (t.name.as_str(), t))
        .collect();
    let producer: HashMap<&str, &NodeProto> = graph
        .node
        .iter()
        .flat_map(|n| n.output.iter().map(move |o| (o.as_str(), n)))
        .collect();
    let mut nodes = Vec::with_capacity(graph.node.len() + 8);
    let mut vocabulary = None;
    for node in &graph.node {
        match dequantized_table(node, &constants, &producer) {
            Some((cast, scale)) => {
                if node.input[1] == "input_ids" {
                    vocabulary = constants
                        .get(cast.input[0].as_str())
                        .and_then(|t| usize::try_from(t.dims[0]).ok());
                }
                nodes.extend(gather_first(node, cast, scale));
            }
            None => nodes.push(node.clone()),
        }
    }
    drop_unread(&mut nodes, graph);
    graph.node = nodes;
    vocabulary
}

/// How many rows the (float) table `input_ids` are looked up in has, for a model whose table
/// is not stored as int8.
pub fn table_rows(graph: &GraphProto) -> Option<usize> {
    let gather = graph
        .node
        .iter()
        .find(|n| n.op_type == "Gather" && n.input.get(1).is_some_and(|i| i == "input_ids"))?;
    let table = graph
        .initializer
        .iter()
        .find(|t| t.name == gather.input[0])?;
    usize::try_from(*table.dims.first()?).ok()
}

/// For a `Gather` along rows of `Cast(int8 constant) * constant scale per row`: that cast and
/// the scale's name.
fn dequantized_table<'a>(
    gather: &NodeProto,
    constants: &HashMap<&str, &TensorProto>,
    producer: &HashMap<&str, &'a NodeProto>,
) -> Option<(&'a NodeProto, &'a str)> {
    let rows = gather
        .attribute
        .iter()
        .all(|a| a.name != "axis" || a.i == 0);
    if gather.op_type != "Gather" || !rows || gather.input.len() != 2 {
        return None;
    }
    let mul = producer.get(gather.input[0].as_str())?;
    if mul.op_type != "Mul" || mul.input.len() != 2 {
        return None;
    }
    let scale = constants.get(mul.input[1].as_str())?;
    if scale.dims.len() != 2 || scale.dims[1] != 1 {
        return None;
    }
    let cast = producer.get(mul.input[0].as_str())?;
    let table = constants.get(cast.input.first()?.as_str())?;
    (cast.op_type == "Cast" && table.dims.first() == scale.dims.first())
        .then_some((*cast, mul.input[1].as_str()))
}

/// The rows and their scales gathered, then cast and multiplied, under the gather's output name.
fn gather_first(gather: &NodeProto, cast: &NodeProto, scale: &str) -> [NodeProto; 4] {
    let out = &gather.output[0];
    let node = |suffix: &str, op: &str, input: Vec<String>, output: String| NodeProto {
        name: format!("{}.{suffix}", gather.name),
        op_type: op.into(),
        input,
        output: vec![output],
        ..NodeProto::default()
    };
    let indices = gather.input[1].clone();
    let mut rows = node(
        "rows",
        "Gather",
        vec![cast.input[0].clone(), indices.clone()],
        format!("{out}.rows"),
    );
    rows.attribute = gather.attribute.clone();
    let mut scales = node(
        "scales",
        "Gather",
        vec![scale.to_owned(), indices],
        format!("{out}.scales"),
    );
    scales.attribute = gather.attribute.clone();
    let mut to_float = node(
        "cast",
        "Cast",
        vec![format!("{out}.rows")],
        format!("{out}.values"),
    );
    to_float.attribute = cast.attribute.clone();
    let scaled = node(
        "scale",
        "Mul",
        vec![format!("{out}.values"), format!("{out}.scales")],
        out.clone(),
    );
    [rows, scales, to_float, scaled]
}

/// Removes the nodes whose outputs nothing reads any more (the table's cast and product).
fn drop_unread(nodes: &mut Vec<NodeProto>, graph: &GraphProto) {
    loop {
        let read: HashSet<String> = nodes
            .iter()
            .flat_map(|n| n.input.iter().cloned())
            .chain(graph.output.iter().map(|o| o.name.clone()))
            .collect();
        let before = nodes.len();
        nodes.retain(|n| n.output.iter().any(|o| read.contains(o)));
        if nodes.len() == before {
            return;
        }
    }
}
