//! What a stored file is called and in which format it is written: `file_format`, the
//! filename's extension or the default, with the compression a `.gz`, `.zst` or `.bz2` names.

use super::names;
use crate::{ErrorCode, ToolError};
use offload_formats::Format;
use offload_formats::files::compressed::Codec;

/// The file's name: `filename` (validated; the format's extension added when it has none), or
/// the default `<server>-<tool>-<time>-<random>.<ext>`.
pub(super) fn file_name(
    server: &str,
    tool: &str,
    filename: Option<&str>,
    format: Format,
    codec: Option<Codec>,
) -> Result<String, ToolError> {
    let extension = extension_of(format, codec);
    Ok(match filename {
        Some(n) => {
            names::validate(n)?;
            if names::extension(n).is_some() {
                n.to_owned()
            } else {
                format!("{n}.{extension}")
            }
        }
        None => names::default_name(server, tool, chrono::Utc::now(), &extension),
    })
}

/// A stored file's extension: the format's, and the compression's after it (`csv.gz`).
pub(super) fn extension_of(format: Format, codec: Option<Codec>) -> String {
    match codec {
        Some(codec) => format!("{}.{}", format.extension(), codec.extension()),
        None => format.extension().to_owned(),
    }
}

pub(super) fn mime_of(format: Format, codec: Option<Codec>) -> &'static str {
    codec.map_or(format.mime_type(), Codec::mime_type)
}

/// The format: `file_format` if given, else the filename's extension, else `default`; with
/// the compression a `.gz`, `.zst` or `.bz2` after it names (`csv.gz`, `data.jsonl.zst`).
pub(super) fn choose_format(
    requested: Option<&str>,
    filename: Option<&str>,
    default: Format,
) -> Result<(Format, Option<Codec>), ToolError> {
    let from_name = filename.and_then(|name| {
        let (inner, codec) = Codec::split(name);
        names::extension(inner)
            .and_then(|e| Format::output(&e))
            .map(|f| (f, codec))
    });
    let chosen = match requested {
        Some(f) => {
            let (inner, codec) = Codec::split(f.trim());
            let format = Format::output(inner).ok_or_else(|| {
                let known: Vec<&str> = Format::OUTPUTS.iter().map(|f| f.name()).collect();
                ToolError::new(
                    ErrorCode::UnsupportedFormat,
                    format!(
                        "file_format '{f}' is not supported; use one of {} (csv, json, jsonl, ... may end with .gz, .zst or .bz2)",
                        known.join(", ")
                    ),
                )
                .with("file_format", f)
            })?;
            if let (Some(named), Some(name)) = (from_name, filename)
                && named != (format, codec)
            {
                return Err(ToolError::new(
                    ErrorCode::InvalidArguments,
                    format!(
                        "filename '{name}' says {} but file_format is {f}; make them agree or leave one out",
                        extension_of(named.0, named.1)
                    ),
                ));
            }
            (format, codec)
        }
        None => from_name.unwrap_or((default, None)),
    };
    match chosen {
        (Format::Parquet, Some(_)) => Err(ToolError::new(
            ErrorCode::UnsupportedFormat,
            "Parquet is compressed inside already; store it as parquet",
        )),
        (_, Some(Codec::Xz)) => Err(ToolError::new(
            ErrorCode::UnsupportedFormat,
            "xz files are read but not written; store as .gz, .zst or .bz2",
        )),
        chosen => Ok(chosen),
    }
}
