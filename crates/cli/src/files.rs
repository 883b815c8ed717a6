//! The human file commands over the engine's file tools: `offload schema`, `offload summarize`,
//! `offload read`. The user names the file, so no roots apply. Output is readable text (the
//! same text a model gets) or, with `--json`, the structured answer.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use offload_formats::files::{Inspector, Quiet, ReadRequest, Settings};

#[derive(Args)]
pub struct SchemaArgs {
    /// The file to describe (any path: the file commands are for people, no roots apply).
    file: PathBuf,
    /// Distinct sample values per column.
    #[arg(long, default_value_t = 5)]
    sample_rows: usize,
    /// Print the structured answer (what a model gets as structuredContent) as JSON.
    /// Print the structured answer (what a model gets as structuredContent) as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
pub struct SummarizeArgs {
    /// The file to summarise.
    file: PathBuf,
    /// Lines shown from the start.
    #[arg(long, default_value_t = 20)]
    max_lines: u64,
    /// Print the structured answer (what a model gets as structuredContent) as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
pub struct ReadArgs {
    /// The file to read.
    file: PathBuf,
    /// First line (0-based); negative: the last |N| lines. Rows for sheets, pages for PDFs.
    #[arg(long, default_value_t = 0, allow_hyphen_values = true)]
    offset: i64,
    /// Lines (rows, pages) to read.
    #[arg(long, default_value_t = 1000)]
    length: u64,
    /// Spreadsheets: sheet name or 0-based index.
    #[arg(long)]
    sheet: Option<String>,
    /// Spreadsheets: cells in A1:D100 form.
    #[arg(long)]
    range: Option<String>,
    /// Text: start at this byte (to go on inside a very long line).
    #[arg(long)]
    byte_offset: Option<u64>,
    /// Print the structured answer (what a model gets as structuredContent) as JSON.
    #[arg(long)]
    json: bool,
}

fn inspector() -> Inspector {
    Inspector::new(Settings::default())
}

fn open(path: &PathBuf) -> Result<(std::fs::File, PathBuf), String> {
    let canonical = std::fs::canonicalize(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let file = offload_formats::files::open_regular(&canonical)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok((file, canonical))
}

fn finish<T: serde::Serialize>(
    result: Result<T, String>,
    json: bool,
    text: impl Fn(&T) -> String,
) -> ExitCode {
    match result {
        Ok(answer) => {
            let out = if json {
                serde_json::to_string_pretty(&answer).unwrap_or_default()
            } else {
                text(&answer)
            };
            // Human commands: stdout is the user's, not a protocol stream.
            #[allow(clippy::print_stdout)]
            {
                println!("{out}");
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("offload: {e}");
            ExitCode::FAILURE
        }
    }
}

pub fn schema(args: SchemaArgs) -> ExitCode {
    let result = open(&args.file).and_then(|(file, path)| {
        inspector()
            .schema(file, &path, args.sample_rows, &Quiet)
            .map_err(|e| e.to_string())
    });
    finish(result, args.json, offload_engine::server::text::schema)
}

pub fn summarize(args: SummarizeArgs) -> ExitCode {
    let result = open(&args.file).and_then(|(file, path)| {
        inspector()
            .summarize(file, &path, args.max_lines, &Quiet)
            .map_err(|e| e.to_string())
    });
    finish(result, args.json, offload_engine::server::text::summary)
}

pub fn read(args: ReadArgs) -> ExitCode {
    let request = ReadRequest {
        offset: args.offset,
        length: args.length,
        sheet: args.sheet,
        range: args.range,
        byte_offset: args.byte_offset,
        budget: None,
    };
    let result = open(&args.file).and_then(|(file, path)| {
        inspector()
            .read(file, &path, &request, &Quiet)
            .map_err(|e| e.to_string())
    });
    finish(result, args.json, offload_engine::server::text::read)
}

/// `offload pdf-text FROM COUNT [IMAGES]`: the child that extracts PDF pages (and their
/// images) for the engine.
pub fn pdf_text(from: u32, count: u32, images: u32) -> ExitCode {
    match offload_formats::files::pdf::worker(from, count, images) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("offload pdf-text: {e}");
            ExitCode::FAILURE
        }
    }
}
