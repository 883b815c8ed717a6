//! Errors in terms a model can act on: the SQL problem, the closest column names, the position.

use datafusion::common::SchemaError;
use datafusion::error::DataFusionError;

#[derive(Debug, thiserror::Error)]
pub enum QueryError {
    /// The query is wrong: the message says what and where.
    #[error("{0}")]
    Query(String),
    /// A source cannot be read as its format.
    #[error("{0}")]
    Source(String),
    /// The query needs more memory than it may use.
    #[error("{0}")]
    Memory(String),
    #[error("the query was cancelled")]
    Cancelled,
    /// DataFusion failed inside (a bug of its own, not of the query).
    #[error(
        "the query engine failed on this query ({0}); rewriting it (fewer self-joins, another form) may help"
    )]
    Internal(String),
    /// Writing the result failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

impl QueryError {
    /// A DataFusion error in plain words; `sql` is the query it came from.
    pub(crate) fn from_datafusion(e: DataFusionError, sql: &str) -> Self {
        let at = e
            .diagnostic()
            .and_then(|d| d.span)
            .map(|s| format!(" at line {}, column {}", s.start.line, s.start.column))
            .unwrap_or_default();
        let root = e.find_root();
        match root {
            DataFusionError::SchemaError(err, _) => match err.as_ref() {
                SchemaError::FieldNotFound {
                    field,
                    valid_fields,
                } => {
                    let names: Vec<String> = valid_fields.iter().map(|c| c.name.clone()).collect();
                    let at = if at.is_empty() {
                        position_of(sql, &field.name)
                    } else {
                        at
                    };
                    QueryError::Query(format!(
                        "unknown column `{}`{}{at}; the columns are {}",
                        field.name,
                        closest(&field.name, &names)
                            .map(|c| format!(" — did you mean `{c}`?"))
                            .unwrap_or_default(),
                        list(&names),
                    ))
                }
                other => QueryError::Query(format!("{other}{at}")),
            },
            DataFusionError::ResourcesExhausted(m) => QueryError::Memory(format!(
                "the query needs more memory than it may use ({m}); filter or aggregate earlier, or raise limits.queryMemoryBytes"
            )),
            DataFusionError::SQL(e, _) => QueryError::Query(format!("SQL syntax: {e}")),
            DataFusionError::ArrowError(e, _) => QueryError::Source(format!("{e}")),
            DataFusionError::ObjectStore(e) => QueryError::Source(format!("{e}")),
            DataFusionError::ParquetError(e) => QueryError::Source(format!("{e}")),
            DataFusionError::Plan(m) => QueryError::Query(format!("{m}{at}")),
            DataFusionError::Execution(m) => QueryError::Query(format!("{m}{at}")),
            DataFusionError::NotImplemented(m) => {
                QueryError::Query(format!("not supported: {m}{at}"))
            }
            other => QueryError::Query(format!("{other}{at}")),
        }
    }
}

/// The name nearest `wanted` (case-insensitive first, then by edit distance).
pub(crate) fn closest(wanted: &str, names: &[String]) -> Option<String> {
    if let Some(same) = names.iter().find(|n| n.eq_ignore_ascii_case(wanted)) {
        return Some(same.clone());
    }
    let wanted = wanted.to_lowercase();
    names
        .iter()
        .map(|n| (strsim::damerau_levenshtein(&wanted, &n.to_lowercase()), n))
        .filter(|(d, n)| *d <= 2.max(n.len() / 3))
        .min_by_key(|(d, _)| *d)
        .map(|(_, n)| n.clone())
}

fn list(names: &[String]) -> String {
    let shown: Vec<String> = names.iter().take(30).map(|n| format!("`{n}`")).collect();
    let more = names.len().saturating_sub(30);
    if more > 0 {
        format!("{} and {more} more", shown.join(", "))
    } else {
        shown.join(", ")
    }
}

/// Where `word` first appears in `sql`, as " at line L, column C" (1-based), if it does.
pub(crate) fn position_of(sql: &str, word: &str) -> String {
    let lower = sql.to_lowercase();
    let Some(offset) = lower.find(&word.to_lowercase()) else {
        return String::new();
    };
    line_column(sql, offset)
}

/// " at line L, column C" of a byte offset.
pub(crate) fn line_column(text: &str, offset: usize) -> String {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    format!(" at line {line}, column {column}")
}
