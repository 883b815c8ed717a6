//! jq programs over JSON, JSON lines and YAML with jaq: for nested answers that are not tables.
//! A JSON lines file is read a line at a time (the program runs on each value, as `jq` does).

use std::io::{BufRead, BufReader, Read};
use std::sync::Arc;

use jaq_core::load::{Arena, File as Program, Loader};
use jaq_core::{Compiler, Ctx, Vars, data, unwrap_valr};
use jaq_json::Val;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::blob::{Blob, BlobReader};
use crate::error::{QueryError, line_column};

/// What the program reads.
#[derive(Debug)]
pub enum JqInput {
    Json(Arc<dyn Blob>),
    Jsonl(Arc<dyn Blob>),
    Yaml(Arc<dyn Blob>),
}

/// The program's outputs: at most `limit`, within the budget.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct JqAnswer {
    pub results: Vec<Value>,
    /// Outputs in all.
    pub count: u64,
    pub truncated: bool,
}

/// Runs `program` over `input` (blocking); `max_document` bounds a JSON or YAML document read
/// whole.
pub fn run_jq(
    program: &str,
    input: JqInput,
    limit: usize,
    budget: usize,
    max_document: u64,
    cancel: &CancellationToken,
) -> Result<JqAnswer, QueryError> {
    let defs = jaq_core::defs()
        .chain(jaq_std::defs())
        .chain(jaq_json::defs());
    let funs = jaq_core::funs()
        .chain(jaq_std::funs())
        .chain(jaq_json::funs());
    let arena = Arena::default();
    let modules = Loader::new(defs)
        .load(
            &arena,
            Program {
                code: program,
                path: (),
            },
        )
        .map_err(|errs| load_error(program, errs))?;
    let filter = Compiler::default()
        .with_funs(funs)
        .compile(modules)
        .map_err(|errs| {
            let (name, undefined) = errs
                .into_iter()
                .flat_map(|(_, e)| e)
                .next()
                .map(|(s, u)| (s, u.as_str()))
                .unwrap_or(("", "symbol"));
            QueryError::Query(format!(
                "jq: undefined {undefined} `{name}`{}",
                offset_in(program, name).map_or(String::new(), |o| line_column(program, o))
            ))
        })?;

    let mut answer = JqAnswer {
        results: Vec::new(),
        count: 0,
        truncated: false,
    };
    let mut used = 0usize;
    let mut run = |value: Val, answer: &mut JqAnswer| -> Result<(), QueryError> {
        let ctx = Ctx::<data::JustLut<Val>>::new(&filter.lut, Vars::new([]));
        for out in filter.id.run((ctx, value)).map(unwrap_valr) {
            if cancel.is_cancelled() {
                return Err(QueryError::Cancelled);
            }
            let out = out.map_err(|e| QueryError::Query(format!("jq: {e}")))?;
            answer.count += 1;
            if answer.results.len() < limit && !answer.truncated {
                let json: Value = serde_json::from_str(&out.to_string())
                    .unwrap_or_else(|_| Value::String(out.to_string()));
                let size = json.to_string().len() + 1;
                if used + size > budget {
                    answer.truncated = true;
                } else {
                    used += size;
                    answer.results.push(json);
                }
            } else {
                answer.truncated = true;
            }
        }
        Ok(())
    };

    match input {
        JqInput::Jsonl(file) => {
            for (n, line) in BufReader::new(BlobReader::new(file)).lines().enumerate() {
                if cancel.is_cancelled() {
                    return Err(QueryError::Cancelled);
                }
                let line = line?;
                if line.trim().is_empty() {
                    continue;
                }
                let value = jaq_json::read::parse_single(line.as_bytes())
                    .map_err(|e| QueryError::Source(format!("line {} is not JSON: {e}", n + 1)))?;
                run(value, &mut answer)?;
            }
        }
        JqInput::Json(file) => {
            let bytes = read_whole(file, max_document)?;
            let value = jaq_json::read::parse_single(&bytes)
                .map_err(|e| QueryError::Source(format!("not JSON: {e}")))?;
            run(value, &mut answer)?;
        }
        JqInput::Yaml(file) => {
            let bytes = read_whole(file, max_document)?;
            let value: Val = serde_yaml::from_slice(&bytes)
                .map_err(|e| QueryError::Source(format!("not YAML: {e}")))?;
            run(value, &mut answer)?;
        }
    }
    Ok(answer)
}

fn read_whole(file: Arc<dyn Blob>, max: u64) -> Result<Vec<u8>, QueryError> {
    let len = file.size()?;
    if len > max {
        return Err(QueryError::Source(format!(
            "the document is {len} bytes; jq reads a JSON or YAML document whole, up to {max} bytes (use sql, or JSON lines, for larger data)"
        )));
    }
    let mut bytes = Vec::with_capacity(len as usize);
    BlobReader::new(file)
        .take(max + 1)
        .read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// The byte offset of `part` in `program`, when `part` is a slice of it.
fn offset_in(program: &str, part: &str) -> Option<usize> {
    let start = program.as_ptr() as usize;
    let at = part.as_ptr() as usize;
    (at >= start && at <= start + program.len()).then(|| at - start)
}

fn load_error(program: &str, errs: jaq_core::load::Errors<&str, ()>) -> QueryError {
    use jaq_core::load::Error;
    let first = errs.into_iter().next().map(|(_, e)| e);
    let (expected, at) = match first {
        Some(Error::Lex(es)) => es
            .into_iter()
            .next()
            .map(|(expect, at)| (expect.as_str().to_owned(), at))
            .unwrap_or_default(),
        Some(Error::Parse(es)) => es
            .into_iter()
            .next()
            .map(|(expect, at)| (expect.as_str().to_owned(), at))
            .unwrap_or_default(),
        Some(Error::Io(es)) => {
            return QueryError::Query(format!(
                "jq: modules cannot be loaded ({})",
                es.into_iter()
                    .map(|(_, m)| m)
                    .collect::<Vec<_>>()
                    .join("; ")
            ));
        }
        None => (String::new(), ""),
    };
    let place = offset_in(program, at).map_or(String::new(), |o| line_column(program, o));
    QueryError::Query(format!("jq syntax: expected {expected}{place}"))
}
