//! Offload's benchmark programs. Each prints Offload's figure beside a baseline measured in the
//! same run, with the difference and the ratio. Run from the repository root with
//! `scripts/bench.sh` (release build).

// A benchmark reports on stdout: that is its whole output.
#![allow(clippy::print_stdout)]

mod answers;
mod app;
mod buckets;
mod confine;
mod file_content;
mod files;
mod first_minute;
mod gateway;
mod http_load;
mod latency;
mod load;
mod modes;
mod offload;
mod peer;
mod query;
mod scripts;
mod search;
mod size;
mod sse;
mod stats;
mod store;
mod team;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(about = "Offload benchmarks: our figures beside a baseline from the same run")]
struct Cli {
    #[command(subcommand)]
    bench: Bench,
}

#[derive(Subcommand)]
enum Bench {
    /// call_tool → fixture echo through `offload mcp`, beside the same call made directly to the
    /// fixture; and list_available_tools over two servers, beside listing both directly.
    Latency {
        /// Measured calls per side (after warm-up).
        #[arg(long, default_value_t = 2000)]
        calls: usize,
    },
    /// What a model is shown for table and text answers of 4 KB to 50 MB, through Offload in
    /// direct mode beside the tool called directly.
    Answers {
        /// The largest answer measured (bytes).
        #[arg(long, default_value_t = 50_000_000)]
        most_bytes: u64,
    },
    /// A client's first minute with slow servers configured: the first tools/list and the first
    /// own-tool call, cold and remembered, beside a client connected directly to the slowest.
    FirstMinute {
        #[arg(long, default_value_t = 5)]
        rounds: usize,
    },
    /// call_tool in the default mode (auto) beside meta, and a direct tool's call, alternating.
    Modes {
        /// Measured calls per side (after warm-up).
        #[arg(long, default_value_t = 2000)]
        calls: usize,
    },
    /// Offload as a gateway: a direct tool's call latency beside call_tool and the direct call;
    /// tools/list bytes with five published servers behind Offload beside the servers directly.
    Gateway {
        /// Measured calls per side (after warm-up).
        #[arg(long, default_value_t = 2000)]
        calls: usize,
    },
    /// The desktop app as host: cold start, idle memory, client start and call latency through
    /// it, beside `offload serve`, the embedded engine and the direct call. Needs a display
    /// (scripts/bench.sh runs it under Xvfb).
    App {
        /// Measured calls per side (after warm-up).
        #[arg(long, default_value_t = 2000)]
        calls: usize,
    },
    /// A ~10 MB JSON table stored as CSV, JSON and YAML through `offload mcp` (time, peak RSS)
    /// beside the direct call; and the bytes the model receives for 1 KB to 100 MB payloads.
    Store,
    /// A 5 MiB CSV into a tool through `offload mcp` beside the direct call; a large CSV
    /// streamed in batches of 10,000 rows (rows/s, peak RSS).
    FileContent {
        /// Size of the large CSV in GB.
        #[arg(long, default_value_t = 1.0)]
        gigabytes: f64,
    },
    /// Concurrent clients each making mixed calls (echo, store, file-content, read_file), every
    /// answer checked, embedded and through one host, beside direct echo calls.
    Load {
        #[arg(long, default_value_t = 8)]
        clients: usize,
        /// Calls per client.
        #[arg(long, default_value_t = 1000)]
        calls: usize,
    },
    /// Concurrent streamable-HTTP clients against `offload serve --http` (mixed checked calls;
    /// echo beside mcp-proxy from PyPI, mcp-hub from npm and Offload's stdio path).
    Http {
        #[arg(long, default_value_t = 32)]
        clients: usize,
        /// Calls per client.
        #[arg(long, default_value_t = 1000)]
        calls: usize,
        /// The mcp-proxy executable (scripts/bench.sh http installs it).
        #[arg(long)]
        mcp_proxy: Option<std::path::PathBuf>,
        /// The mcp-hub executable (scripts/bench.sh http installs it).
        #[arg(long)]
        mcp_hub: Option<std::path::PathBuf>,
    },
    /// A team's gateway: three replicas behind nginx sharing SeaweedFS, concurrent clients'
    /// mixed checked calls while one replica is killed and started again.
    Team {
        #[arg(long, default_value_t = 32)]
        clients: usize,
        /// Calls per client.
        #[arg(long, default_value_t = 1000)]
        calls: usize,
    },
    /// get_file_schema, summarize_file and read_file on a large text file, a 100 MB CSV and a
    /// 50,000-row xlsx, beside head, tail -n, sed -n and wc -l on the same files, and beside
    /// desktop-commander's read_file (from npm) where it is installed.
    Files {
        /// Size of the large text file in GB (10 shows flat memory on 10 GB).
        #[arg(long, default_value_t = 1.0)]
        gigabytes: f64,
        /// Where the generated files are kept (reused between runs).
        #[arg(long)]
        dir: Option<std::path::PathBuf>,
    },
    /// summarize_file, head, tail and a deep read_file on a 1 GB object in a local S3 bucket
    /// (SeaweedFS), with the bytes each call fetched from the store, beside the same tools on a
    /// local copy and beside cloud-fs (from npm) on the same bucket.
    Buckets {
        /// Size of the object in GB.
        #[arg(long, default_value_t = 1.0)]
        gigabytes: f64,
        /// Where the local copy is kept (reused between runs).
        #[arg(long)]
        dir: Option<std::path::PathBuf>,
    },
    /// query_file's group-by over a ~100 MB CSV and its Parquet copy (time, Offload's peak RSS)
    /// beside DuckDB (Python, from tests/interop/.venv) on the same files; and the bytes a model
    /// receives for "total per region" with query_file beside paging the file with read_file.
    Query {
        /// Size of the CSV in MB.
        #[arg(long, default_value_t = 100)]
        megabytes: u64,
    },
    /// What confinement costs: a start through `offload sandbox-exec` beside a direct start, a
    /// server's start and first call confined beside `"sandbox": "off"`, and warm calls to each.
    Confine {
        #[arg(long, default_value_t = 300)]
        starts: usize,
        #[arg(long, default_value_t = 2000)]
        calls: usize,
    },
    /// run_script beside step-by-step meta tool calls for "look up each of 200 CSV rows with a
    /// tool and total a field" (bytes through the model's context, time), and a script's start
    /// warm and cold beside a no-op tool. Needs scripts/setup-interop.sh (a Python SDK server).
    Scripts {
        #[arg(long, default_value_t = 20)]
        rounds: usize,
        #[arg(long, default_value_t = 300)]
        starts: usize,
    },
    /// How list_available_tools ranks: top-1, top-5 and nDCG@5 on public tool-retrieval sets
    /// (MetaTool, BFCL) beside Okapi BM25 over the same text, and a search's time at ~2,000
    /// tools.
    Search {
        /// Where the sets are (scripts/search-sets.py makes them).
        #[arg(long, default_value = "crates/bench/data/search")]
        data: std::path::PathBuf,
        /// Sentence model files, each scored as a candidate (the first also through offload
        /// mcp); by default those scripts/setup-model.sh installs (the shipped one, then the
        /// `--candidate`), when they are there.
        #[arg(long)]
        model: Vec<std::path::PathBuf>,
        /// Only a search's time at ~2,000 tools, without scoring the sets (a few minutes
        /// instead of half an hour).
        #[arg(long)]
        speed: bool,
    },
    /// The release binaries' size (machine code, read-only data, the rest) and the .deb's,
    /// beside the installed footprint of the peer gateways the other benches install.
    Size {
        /// The cargo target directory the release build went to.
        #[arg(long, env = "CARGO_TARGET_DIR", default_value = "target")]
        target_dir: std::path::PathBuf,
        /// Where scripts/bench.sh installs the peers (~/.cache/offload).
        #[arg(long)]
        peers: std::path::PathBuf,
    },
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    offload_testkit::install_crypto_provider();
    match Cli::parse().bench {
        Bench::Latency { calls } => latency::run(calls).await,
        Bench::Gateway { calls } => gateway::run(calls).await,
        Bench::Modes { calls } => modes::run(calls).await,
        Bench::FirstMinute { rounds } => first_minute::run(rounds).await,
        Bench::Answers { most_bytes } => answers::run(most_bytes).await,
        Bench::App { calls } => app::run(calls).await,
        Bench::Store => store::run().await,
        Bench::FileContent { gigabytes } => file_content::run(gigabytes).await,
        Bench::Files { gigabytes, dir } => files::run(gigabytes, dir).await,
        Bench::Load { clients, calls } => load::run(clients, calls).await,
        Bench::Http {
            clients,
            calls,
            mcp_proxy,
            mcp_hub,
        } => http_load::run(clients, calls, mcp_proxy, mcp_hub).await,
        Bench::Query { megabytes } => query::run(megabytes).await,
        Bench::Team { clients, calls } => team::run(clients, calls).await,
        Bench::Buckets { gigabytes, dir } => buckets::run(gigabytes, dir).await,
        Bench::Size { target_dir, peers } => size::run(target_dir, peers),
        Bench::Confine { starts, calls } => confine::run(starts, calls).await,
        Bench::Scripts { rounds, starts } => scripts::run(rounds, starts).await,
        Bench::Search { data, model, speed } => {
            let models = if model.is_empty() {
                search::installed_models()
            } else {
                model
            };
            search::run(&data, &models, speed).await
        }
    }
}
