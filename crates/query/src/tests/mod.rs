//! The query engine's tests, by concern; the helpers they share.

use std::fs::File;
use std::io::Write as _;

use tokio_util::sync::CancellationToken;

use super::*;

mod bounds;
mod jq;
mod parts;
mod sql;

fn file(dir: &tempfile::TempDir, name: &str, text: &str) -> Arc<dyn Blob> {
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    Arc::new(std::fs::File::open(path).unwrap())
}

fn csv(dir: &tempfile::TempDir, name: &str, text: &str) -> Source {
    Source {
        name: "data".into(),
        label: name.into(),
        data: Data::File {
            file: file(dir, name, text),
            format: Format::Delimited { delimiter: b',' },
        },
    }
}

fn limits(dir: &tempfile::TempDir) -> Limits {
    Limits {
        rows: 100,
        budget: 64 * 1024,
        memory: 256 << 20,
        spill_dir: Some(dir.path().to_owned()),
    }
}

fn ask(sources: Vec<Source>, sql: &str, dir: &tempfile::TempDir) -> Result<Answer, QueryError> {
    Querier::new().answer(Query {
        sources,
        sql,
        limits: &limits(dir),
        cancel: &CancellationToken::new(),
        progress: &mut |_| {},
    })
}

const SALES: &str =
    "region,amount,day\nnorth,10,2024-01-01\nsouth,5.5,2024-01-02\nnorth,2,2024-01-03\n,1,\n";

fn json_table(dir: &tempfile::TempDir, name: &str, text: &str) -> Source {
    Source {
        name: "data".into(),
        label: name.into(),
        data: Data::File {
            file: file(dir, name, text),
            format: Format::Json,
        },
    }
}
