//! Several files in one `call_tool_with_file_content`: `file_paths`, or a glob in `file_path`
//! (expanded inside the allowed directories only). Their rows go together, in order, into the
//! one list at `data_key` — or, with `batch_size`, batches run across the files (`batch`).
//! Tables must have the same columns; `source_file` adds each row's file.

use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::{Params, Prepared, describe, merge};
use crate::roots::is_glob;
use crate::{Engine, ErrorCode, ToolError};
use offload_formats::Format;
use offload_formats::inputs;
use offload_formats::units::human_bytes;

/// The most files one call takes (a glob naming more is refused, not cut).
pub const MAX_FILES: usize = 1000;

/// The field that names a row's file.
pub const SOURCE_FILE: &str = "source_file";

/// The files a call names, in order: `file_paths` or `file_path`, each glob expanded (sorted).
pub async fn sources(engine: &Arc<Engine>, p: &Params) -> Result<Vec<String>, ToolError> {
    let patterns: Vec<String> = match (&p.file_paths, p.file_path.is_empty()) {
        (Some(_), false) => {
            return Err(ToolError::new(
                ErrorCode::InvalidArguments,
                "give file_path or file_paths, not both",
            ));
        }
        (Some(list), true) if !list.is_empty() => list.clone(),
        (_, false) => vec![p.file_path.clone()],
        _ => {
            return Err(ToolError::new(
                ErrorCode::InvalidArguments,
                "file_path (or file_paths) is required: the file whose data goes into the call",
            ));
        }
    };
    // URLs are fetched first (a `?` in one is no glob); their downloads are files as they are.
    let mut entries = Vec::with_capacity(patterns.len());
    for pattern in patterns {
        if crate::urls::is_url(&pattern) {
            entries.push((
                crate::server::downloads::localize(engine, &pattern).await?,
                false,
            ));
        } else {
            let glob = is_glob(&pattern);
            entries.push((pattern, glob));
        }
    }
    let roots = engine.roots();
    tokio::task::spawn_blocking(move || {
        let mut files = Vec::new();
        for (pattern, glob) in entries {
            if !glob {
                files.push(pattern);
                continue;
            }
            let found = roots.expand_glob(&pattern, MAX_FILES)?;
            if found.is_empty() {
                return Err(ToolError::new(
                    ErrorCode::PathNotFound,
                    format!("'{pattern}' matches no file in the allowed directories"),
                )
                .with("path", pattern));
            }
            files.extend(found.into_iter().map(|f| f.display().to_string()));
        }
        if files.len() > MAX_FILES {
            return Err(ToolError::new(
                ErrorCode::InvalidArguments,
                format!(
                    "{} files is more than one call takes ({MAX_FILES})",
                    files.len()
                ),
            ));
        }
        Ok(files)
    })
    .await
    .map_err(|e| ToolError::new(ErrorCode::Internal, e.to_string()))?
}

/// The input format of `path`: `file_format` when given, else its extension's.
pub fn format_of(p: &Params, path: &str) -> Result<Format, ToolError> {
    match &p.file_format {
        Some(f) => Format::parse(f).ok_or_else(|| {
            ToolError::new(
                ErrorCode::UnsupportedFormat,
                format!("file_format '{f}' is not one of json, jsonl, ndjson, csv, tsv, yaml, yml, xml, txt, md, html, xlsx, xls, ods, parquet"),
            )
        }),
        None => Ok(Format::of_path(std::path::Path::new(path))),
    }
}

/// Every file's rows in one list at `data_key`, the files' total within the input limit.
pub async fn prepare(
    engine: &Arc<Engine>,
    p: &Params,
    files: &[String],
    infer: inputs::Typing,
    base: Map<String, Value>,
    storing: bool,
) -> Result<Prepared, ToolError> {
    let Some(key) = p.data_key.clone().filter(|k| !k.is_empty()) else {
        return Err(ToolError::new(
            ErrorCode::InvalidArguments,
            "several files need data_key: the argument that takes their rows (e.g. \"data_key\": \"rows\")",
        ));
    };
    let tag = p.source_file.unwrap_or(false);
    let limit = engine.limits().max_input_bytes;
    let mut rows = Vec::new();
    let mut warnings = Vec::new();
    let mut columns: Option<(String, Vec<String>)> = None;
    let mut total = 0u64;
    for file in files {
        let format = format_of(p, file)?;
        let roots = engine.roots();
        let (data, more) =
            crate::file_args::parsed(roots, limit, file, format, infer.clone(), p.sheet.clone())
                .await?;
        total += crate::budget::json_size(&data);
        if total > limit {
            return Err(ToolError::new(
                ErrorCode::FileTooLarge,
                format!(
                    "the files' data is more than the input limit of {} (limits.maxInputBytes) by {file}; send them in parts with batch_size (no size limit then)",
                    human_bytes(limit)
                ),
            ));
        }
        let Value::Array(items) = data else {
            return Err(ToolError::new(
                ErrorCode::InvalidArguments,
                format!("{file} holds {}, not a list of rows", describe(&data)),
            )
            .with("path", file.as_str()));
        };
        if format.is_table()
            && let Some(Value::Object(first)) = items.first()
        {
            let names: Vec<String> = first.keys().cloned().collect();
            same_columns(&mut columns, file, names)?;
        }
        for mut item in items {
            if tag {
                let Value::Object(fields) = &mut item else {
                    return Err(ToolError::new(
                        ErrorCode::InvalidArguments,
                        format!(
                            "source_file needs rows that are objects, and {file} holds other values"
                        ),
                    ));
                };
                fields.insert(SOURCE_FILE.to_owned(), Value::String(file.clone()));
            }
            rows.push(item);
        }
        warnings.extend(more.into_iter().map(|w| format!("{file}: {w}")));
    }
    let args = merge(base, Value::Array(rows), Some(&key))?;
    crate::budget::check_message_size(
        engine.limits().max_upstream_message_bytes,
        &args,
        Some("list"),
    )?;
    let recorded = if storing {
        Value::Object(args.clone())
    } else {
        json!({"file_paths": files, "data_key": key})
    };
    Ok(Prepared {
        args,
        recorded,
        warnings,
        splice: None,
    })
}

/// Tables joined in one list must have the same columns: the first file's decide.
pub fn same_columns(
    seen: &mut Option<(String, Vec<String>)>,
    file: &str,
    names: Vec<String>,
) -> Result<(), ToolError> {
    match seen {
        None => {
            *seen = Some((file.to_owned(), names));
            Ok(())
        }
        Some((first, expected)) if *expected != names => Err(ToolError::new(
            ErrorCode::InvalidArguments,
            format!(
                "{file} has the columns {names:?} but {first} has {expected:?}; files whose rows go together need the same columns"
            ),
        )
        .with("path", file)),
        Some(_) => Ok(()),
    }
}
